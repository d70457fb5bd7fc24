import { ConfigError, UserError } from '../../common/errors.js';
import type { JsonValue } from '../../json/index.js';
import { getDataFromPath, guzzleQueryParse, phpEmpty, phpJsonEncode } from '../../php/index.js';
import { describeValue, type PaginationOptions } from './options.js';
import { stopAndReset, type PageRequest, type Paginator, type ReceivedPage, type Stop } from './paginator.js';

export interface ResponseUrlSettings {
  /** path of the next URL in the response */
  urlKey: string;
  delimiter: string;
  /** send the job's params with the next URL */
  includeParams: boolean;
  /** keep the job's endpoint and take the next URL's query as params */
  paramIsQuery: boolean;
}

export function responseUrlSettings(
  options: PaginationOptions,
  { withDelimiter }: { withDelimiter: boolean },
): ResponseUrlSettings {
  return {
    urlKey: options.string('urlKey', 'next_page'),
    delimiter: withDelimiter ? delimiterOf(options) : '.',
    includeParams: options.bool('includeParams', false),
    paramIsQuery: options.bool('paramIsQuery', false),
  };
}

function delimiterOf(options: PaginationOptions): string {
  const v = options.raw.get('delimiter');
  if (v === undefined || v === null) return '.';
  if (typeof v !== 'string' || v === '') {
    throw new ConfigError(
      options.at('delimiter'),
      `must be a non-empty string, got ${describeValue(v)}`,
      'Set the separator of urlKey, e.g. "."',
    );
  }
  return v;
}

/** The next URL found in a response, or why there is none (GE: a PHP-empty value ends paging). */
export function nextUrlIn(
  response: JsonValue,
  settings: ResponseUrlSettings,
  method: string,
): { url: string } | { none: string } {
  const value = getDataFromPath(response, settings.urlKey, settings.delimiter);
  if (value === undefined) return { none: `${settings.urlKey} is not in the response` };
  if (phpEmpty(value, false)) return { none: `${settings.urlKey} is ${phpJsonEncode(value)}` };
  if (typeof value !== 'string') {
    throw new UserError(
      'GEX_API_RESPONSE_INVALID',
      `${method} pagination: the next page URL at '${settings.urlKey}' must be a string, got ${phpJsonEncode(value)}.`,
    );
  }
  return { url: value };
}

/**
 * `response.url`: the first request is the job's own; each next one goes to the URL the response
 * names at `urlKey` — as the endpoint (relative URLs resolve against baseUrl, not the previous
 * URL), or with `paramIsQuery` its query overlaid on the params of the job's endpoint. The job's
 * params are sent again only with `includeParams`.
 */
export class ResponseUrlPaginator implements Paginator {
  constructor(readonly settings: ResponseUrlSettings) {}

  describe(): string {
    const s = this.settings;
    const how = s.paramIsQuery ? 'its query as params' : 'as the endpoint';
    return `response.url (next URL at ${s.urlKey}, ${how}${s.includeParams ? ', with the job params' : ''})`;
  }

  first(job: PageRequest): PageRequest {
    return job;
  }

  next(job: PageRequest, page: ReceivedPage): PageRequest | Stop {
    const next = nextUrlIn(page.response, this.settings, 'response.url');
    if ('none' in next) return stopAndReset(this, `response.url: no next page (${next.none})`, 'noNextPage');
    return this.requestFor(job, next.url);
  }

  /** The request for a next-page URL. */
  requestFor(job: PageRequest, url: string): PageRequest {
    const params = this.settings.includeParams ? new Map(job.params) : new Map<string, JsonValue>();
    if (!this.settings.paramIsQuery) return { ...job, endpoint: url, params };
    // Guzzle Query::parse, then PHP array_replace: the URL's values replace the job's in place, new keys are appended
    for (const [key, value] of guzzleQueryParse(url.replace(/^\?+/, ''))) params.set(key, value);
    return { ...job, params };
  }

  reset(): void {}

  clone(): Paginator {
    return new ResponseUrlPaginator(this.settings);
  }
}
