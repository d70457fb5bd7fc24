import type { JsonObject, JsonValue } from '../../php-compat/index.js';
import type { JobMethod } from '../config/job-config.js';

/** What a job asks for: the endpoint, its (evaluated) params and method. Paginators vary it. */
export interface PageRequest {
  endpoint: string;
  params: JsonObject;
  method: JobMethod;
}

/** A page that has been fetched: the request, the decoded response and the records found in it. */
export interface ReceivedPage {
  request: PageRequest;
  response: JsonValue;
  data: JsonValue[];
}

/** The end of pagination, with the reason the logs report. */
export class Stop {
  constructor(readonly reason: string) {}
}

/**
 * The one protocol every pagination method implements (after dlt's paginators and Keboola
 * juicer's scrollers): the first request of a job, then — from the page just received — the next
 * request or a Stop. Stop conditions (nextPageFlag, forceStop, limitStop) are decorators that
 * wrap a Paginator, not code inside each method.
 */
export interface Paginator {
  /** short description for logs, e.g. "pagenum (page=1.., limit=100)" — with the job's own overrides */
  describe(job: PageRequest): string;
  first(job: PageRequest): PageRequest;
  next(job: PageRequest, page: ReceivedPage): PageRequest | Stop;
  /** back to the initial state (a method's own stop resets it, as GE does) */
  reset(): void;
  /** a fresh paginator with the same options (child jobs inherit the parent's pagination) */
  clone(): Paginator;
}

/**
 * Where a page value goes: GE always overlays pagination values on the job's params — a key the
 * job already has keeps its place, new keys are appended (PHP `array_replace`). For GET that is
 * the query string, for POST/FORM the body.
 */
export function withParams(request: PageRequest, values: ReadonlyArray<readonly [string, JsonValue]>): PageRequest {
  const params = new Map(request.params);
  for (const [key, value] of values) params.set(key, value);
  return { ...request, params };
}
