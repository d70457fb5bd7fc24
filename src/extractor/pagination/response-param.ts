import { ConfigError } from '../../common/errors.js';
import type { JsonObject } from '../../json/index.js';
import { arrayReplaceRecursive, getDataFromPath, phpEmpty, phpJsonEncode, phpToString } from '../../php/index.js';
import type { JobMethod } from '../config/job-config.js';
import { describeValue, type PaginationOptions } from './options.js';
import { stopAndReset, type PageRequest, type Paginator, type ReceivedPage, type Stop } from './paginator.js';

/** The parts of a job a `scrollRequest` may replace for the next pages. */
export interface ScrollRequest {
  endpoint?: string;
  method?: JobMethod;
  params?: JsonObject;
}

export interface ResponseParamSettings {
  /** path of the next-page value in the response */
  responseParam: string;
  /** the parameter that carries it */
  queryParam: string;
  includeParams: boolean;
  scrollRequest: ScrollRequest | null;
}

export function responseParamSettings(options: PaginationOptions): ResponseParamSettings {
  return {
    responseParam: options.required(
      'responseParam',
      'Set the path of the next-page value in the response, e.g. "meta.next_token"',
    ),
    queryParam: options.required('queryParam', 'Set the request parameter that carries it, e.g. "page_token"'),
    includeParams: options.bool('includeParams', false),
    scrollRequest: scrollRequestOf(options),
  };
}

/** `scrollRequest`: a job-like object; only what changes the request (endpoint, method, params). */
function scrollRequestOf(options: PaginationOptions): ScrollRequest | null {
  const scroll = options.nested('scrollRequest', 'It is job-like, e.g. {"endpoint": "results", "method": "GET"}');
  if (!scroll) return null;
  const request: ScrollRequest = {};
  const endpoint = scroll.raw.get('endpoint');
  if (endpoint !== undefined) {
    if (typeof endpoint !== 'string' || endpoint === '') {
      throw new ConfigError(
        scroll.at('endpoint'),
        `must be a non-empty string, got ${describeValue(endpoint)}`,
        'Set the endpoint of the next pages, e.g. "results"',
      );
    }
    request.endpoint = endpoint;
  }
  const method = scroll.raw.get('method');
  if (!phpEmpty(method)) {
    const name = phpToString(method).toUpperCase();
    if (typeof method !== 'string' || (name !== 'GET' && name !== 'POST' && name !== 'FORM')) {
      throw new ConfigError(scroll.at('method'), `unknown method ${describeValue(method!)}`, 'Use GET, POST or FORM');
    }
    request.method = name;
  }
  const params = scroll.nested('params', 'Set the parameters as an object, e.g. {"scroll": "1m"}');
  if (params) request.params = params.raw;
  if (scroll.raw.has('headers')) {
    throw new ConfigError(
      scroll.at('headers'),
      'is not supported by this version of gex',
      'Set the headers on the job instead',
    );
  }
  return request;
}

/**
 * `response.param`: the first request is the job's own; each next one sends the value found in
 * the response at `responseParam` as `queryParam`, with the job's params only when
 * `includeParams`, and with `scrollRequest` (endpoint, method, params) deep-merged over the job.
 */
export class ResponseParamPaginator implements Paginator {
  constructor(readonly settings: ResponseParamSettings) {}

  describe(): string {
    const s = this.settings;
    const to = s.scrollRequest?.endpoint ? ` to ${s.scrollRequest.endpoint}` : '';
    return `response.param (${s.responseParam} → ${s.queryParam}${to}${s.includeParams ? ', with the job params' : ''})`;
  }

  first(job: PageRequest): PageRequest {
    return job;
  }

  next(job: PageRequest, page: ReceivedPage): PageRequest | Stop {
    const { responseParam, queryParam, includeParams, scrollRequest } = this.settings;
    const value = getDataFromPath(page.response, responseParam);
    if (value === undefined)
      return stopAndReset(this, `response.param: no next page (${responseParam} is not in the response)`, 'noNextPage');
    if (phpEmpty(value, false))
      return stopAndReset(
        this,
        `response.param: no next page (${responseParam} is ${phpJsonEncode(value)})`,
        'noNextPage',
      );
    let params: JsonObject = new Map(includeParams ? job.params : []);
    const request: PageRequest = { ...job };
    if (scrollRequest) {
      if (scrollRequest.endpoint !== undefined) request.endpoint = scrollRequest.endpoint;
      if (scrollRequest.method !== undefined) request.method = scrollRequest.method;
      if (scrollRequest.params) params = arrayReplaceRecursive(params, scrollRequest.params) as JsonObject;
    }
    params.set(queryParam, value); // the value as it is: an integer 2 is sent as 2
    return { ...request, params };
  }

  reset(): void {}

  clone(): Paginator {
    return new ResponseParamPaginator(this.settings);
  }
}
