import type { JsonObject, JsonValue } from '../../json/index.js';
import type { JobMethod } from '../config/job-config.js';

/** What a job asks for: the endpoint, its (evaluated) params and method. Paginators vary it. */
export interface PageRequest {
  endpoint: string;
  params: JsonObject;
  method: JobMethod;
  /**
   * the job's `scroller` key, read by `multiple` pagination; when absent, `multiple` uses the
   * name given to createPaginator (the top-level job's)
   */
  scroller?: string | null;
}

/** A page that has been fetched: the request, the decoded response and the records found in it. */
export interface ReceivedPage {
  request: PageRequest;
  response: JsonValue;
  data: JsonValue[];
}

/**
 * Why a job instance stopped, for machines (ConfigJobResult, JSON logs, the run summary). Caps are the
 * limits a configuration sets (`forceStop`, `limitStop`): a job they stop may have had more pages.
 * The others are natural ends — the data ran out:
 * - `underflow`: a page held fewer records than the limit (pagenum, offset)
 * - `emptyPage`: a page held no records (pagenum without a limit, cursor)
 * - `total`: the last page by the total of the first response (totalPath, totalPagesPath)
 * - `nextPageFlag`: the response's flag said it was the last page
 * - `noNextPage`: the response named no next page (response.url, response.param,
 *   zendesk.response.url — also a next page starting less than 6 minutes ago)
 * - `duplicatePage`: a response equal to the previous one (not written)
 * - `noPagination`: one request, no pagination configured
 */
export const CAP_CODES = [
  'forceStop.pages',
  'forceStop.time',
  'forceStop.volume',
  'limitStop.count',
  'limitStop.field',
] as const;
export const NATURAL_END_CODES = [
  'underflow',
  'emptyPage',
  'total',
  'nextPageFlag',
  'noNextPage',
  'duplicatePage',
  'noPagination',
] as const;
export type CapCode = (typeof CAP_CODES)[number];
export type StopCode = CapCode | (typeof NATURAL_END_CODES)[number];

/** The end of pagination: the reason the logs report and its code (`stoppedBy`). */
export class Stop {
  constructor(
    readonly reason: string,
    readonly code: StopCode,
  ) {}

  /** a limit of the configuration ended the job, not the data */
  get cap(): boolean {
    return (CAP_CODES as readonly string[]).includes(this.code);
  }

  /** How the job's last log line says it: a cap reads distinctly from a natural end. */
  describe(): string {
    return this.cap ? `stopped by cap ${this.code} (${this.reason})` : `stopped: ${this.reason}`;
  }
}

/**
 * A method's own end of pagination. GE's scrollers reset themselves when they stop (a stop
 * decorator does not), which matters for a child paginator shared by several placeholder
 * combinations: the next one starts again from the first page.
 */
export function stopAndReset(paginator: Paginator, reason: string, code: StopCode): Stop {
  paginator.reset();
  return new Stop(reason, code);
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
  /** the first request of a job — from the current state: GE does not reset before it */
  first(job: PageRequest): PageRequest;
  next(job: PageRequest, page: ReceivedPage): PageRequest | Stop;
  /** back to the initial state (a method's own stop resets it, as GE does) */
  reset(): void;
  /** a fresh paginator with the same options (child jobs inherit the parent's pagination) */
  clone(): Paginator;
  /**
   * The next `count` requests this paginator would return if pagination goes on — only where
   * they are known in advance (page numbers, offsets with a limit). Used to fetch pages in
   * parallel; the sequential protocol above still decides, so output and stops do not change.
   * Must not change the paginator's state.
   */
  predict?(job: PageRequest, count: number): PageRequest[];
  /**
   * How many records the job will have in all, once a received page told (limitStop, a total of
   * the first response); undefined while unknown. Only the progress line's ETA uses it.
   */
  expectedRecords?(): number | undefined;
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
