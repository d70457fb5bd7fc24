import { guzzleQueryParse } from '../../php/index.js';
import { stopAndReset, type PageRequest, type Paginator, type ReceivedPage, type Stop } from './paginator.js';
import { nextUrlIn, ResponseUrlPaginator, type ResponseUrlSettings } from './response-url.js';

/** Zendesk's incremental exports must not ask for data newer than this. */
const RECENT_SECONDS = 6 * 60;

/**
 * `zendesk.response.url`: `response.url` (without a `delimiter` option) that also stops when the
 * next URL's `start_time` (unix seconds) is less than 6 minutes ago — Zendesk's incremental
 * export would only return the same recent records again.
 */
export class ZendeskResponseUrlPaginator implements Paginator {
  private readonly urls: ResponseUrlPaginator;

  constructor(
    readonly settings: ResponseUrlSettings,
    /** milliseconds since the epoch (tests pin it) */
    private readonly clock: () => number = Date.now,
  ) {
    this.urls = new ResponseUrlPaginator(settings);
  }

  describe(): string {
    return `zendesk.${this.urls.describe()}, until start_time is within ${RECENT_SECONDS / 60} minutes of now`;
  }

  first(job: PageRequest): PageRequest {
    return job;
  }

  next(job: PageRequest, page: ReceivedPage): PageRequest | Stop {
    const next = nextUrlIn(page.response, this.settings, 'zendesk.response.url');
    if ('none' in next) return stopAndReset(this, `zendesk.response.url: no next page (${next.none})`, 'noNextPage');
    const start = startTimeOf(next.url);
    if (start !== null && start > this.clock() / 1000 - RECENT_SECONDS) {
      return stopAndReset(
        this,
        `zendesk.response.url: the next start_time ${start} is less than ${RECENT_SECONDS / 60} minutes ago`,
        'noNextPage',
      );
    }
    return this.urls.requestFor(job, next.url);
  }

  reset(): void {}

  clone(): Paginator {
    return new ZendeskResponseUrlPaginator(this.settings, this.clock);
  }
}

/** `start_time` of a URL's query as GE reads it (`DateTime::createFromFormat('U', …)`), or null. */
function startTimeOf(url: string): number | null {
  const value = guzzleQueryParse(queryOf(url)).get('start_time');
  // PHP truthiness first ("0" is no start time), then the 'U' format: an optionally signed integer
  if (typeof value !== 'string' || value === '' || value === '0' || !/^[+-]?\d+$/.test(value)) return null;
  return Number(value);
}

/** The query of a URL (psr7 `Uri::getQuery()`): after the first `?`, up to any `#`. */
function queryOf(url: string): string {
  const withoutFragment = url.split('#', 1)[0];
  const at = withoutFragment.indexOf('?');
  return at < 0 ? '' : withoutFragment.slice(at + 1);
}
