import { ConfigError } from '../../common/errors.js';
import { displayId, displayText, quoteForLog } from '../../common/log-text.js';
import { groupThousands, plural } from '../../common/text.js';
import { JsonFloat, type JsonValue } from '../../json/index.js';
import { getDataFromPath, phpEmpty } from '../../php/index.js';
import { describeValue, type PaginationOptions } from './options.js';
import type { PageRequest, ReceivedPage } from './paginator.js';

/**
 * `totalPath` / `totalPagesPath` (gex's additions to `pagenum` and `offset`): the number of
 * records or pages an API reports in its first response. With it the last page is known up
 * front: parallel pages stop at it, the job ends after it without asking for an empty page, and
 * the progress line has an ETA.
 */
export interface TotalSettings {
  /** what the number counts */
  kind: 'records' | 'pages';
  /** the dotted path of the number in the response (as limitStop.field) */
  path: string;
  /** the option's JSON path, e.g. parameters.api.pagination.totalPath (messages) */
  option: string;
}

/** The methods whose pages are numbered, so that a total tells which is the last. */
export const TOTAL_METHODS = ['pagenum', 'offset'];

const FIX = 'Set the dotted path of the number in the response, e.g. "meta.total"';

/** The total option of a pagination config, or null; a wrong type or both keys is a ConfigError. */
export function totalSettings(options: PaginationOptions): TotalSettings | null {
  const records = pathOption(options, 'totalPath');
  const pages = pathOption(options, 'totalPagesPath');
  if (records !== null && pages !== null) {
    throw new ConfigError(
      options.path,
      "has both 'totalPath' and 'totalPagesPath'",
      'Keep one: totalPath for a number of records, totalPagesPath for a number of pages',
    );
  }
  if (records !== null) return { kind: 'records', path: records, option: options.at('totalPath') };
  if (pages !== null) return { kind: 'pages', path: pages, option: options.at('totalPagesPath') };
  return null;
}

function pathOption(options: PaginationOptions, key: string): string | null {
  const value = options.raw.get(key);
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string')
    throw new ConfigError(options.at(key), `must be a string, got ${describeValue(value)}`, FIX);
  return value;
}

/** `, records at meta.total` for a paginator's description (empty without a total). */
export function describeTotal(total: TotalSettings | null): string {
  return total === null ? '' : `, ${total.kind} at ${displayId(total.path)}`;
}

/** A total set for a method that cannot use it is refused: the user expects it to do something. */
export function refuseTotalFor(options: PaginationOptions, method: JsonValue | undefined): void {
  for (const key of ['totalPath', 'totalPagesPath']) {
    const value = options.raw.get(key);
    if (value === undefined || value === null || value === '') continue;
    const name = phpEmpty(method) ? 'no pagination method' : `method ${describeValue(method!)}`;
    throw new ConfigError(
      options.at(key),
      `works with pagenum and offset only, not with ${name}`,
      `Remove "${key}", or set it next to "method": "pagenum" or "offset" (with multiple: inside such a scroller)`,
    );
  }
}

/** Where the one warning about an unusable total of a paginator (and its clones) goes. */
export class TotalWarning {
  private warned = false;

  constructor(private readonly warn: (message: string) => void) {}

  report(message: string): void {
    if (this.warned) return;
    this.warned = true;
    this.warn(message);
  }
}

/** The total at `path` as a whole number of 0 or more, or what is wrong with it. */
export function readTotal(response: JsonValue, path: string): { total: number } | { problem: string } {
  const value = getDataFromPath(response, path);
  if (value === undefined || value === null) return { problem: 'is not in the first response' };
  const n = numberOf(value);
  if (n === undefined || !Number.isInteger(n) || n < 0)
    return { problem: `is ${shownValue(value)} in the first response, not a whole number of 0 or more` };
  // beyond 2^53 page arithmetic is inexact; no real collection is that large
  if (n > Number.MAX_SAFE_INTEGER)
    return { problem: `is ${shownValue(value)} in the first response, too large to be a count` };
  return { total: n };
}

/** Numbers, and digit strings (some APIs send counts as text). */
function numberOf(value: JsonValue): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof JsonFloat) return value.value;
  if (typeof value === 'string' && /^\s*\d{1,20}\s*$/.test(value)) return Number(value);
  return undefined;
}

const SHOWN_LENGTH = 40;

/** A response value for a log line: short, and hostile text escaped. */
function shownValue(value: JsonValue): string {
  if (typeof value !== 'string') return describeValue(value);
  return quoteForLog(value.length > SHOWN_LENGTH ? `${value.slice(0, SHOWN_LENGTH)}…` : value);
}

/**
 * The total of one job instance. Read from its first response only: later pages that omit it (or
 * change it) do not matter. An unusable total (missing, negative, not a number, too large) is
 * ignored with one warning per paginator, and the job ends as it would without the option.
 */
export class FirstPageTotal {
  /** the instance has started and its first response has not been read yet */
  private awaiting = false;
  private value: number | undefined;
  /** records per page: the limit, or the first page's count without one */
  private pageSize = 0;
  /** records of the collection before the instance's first page (offsetFromJob, a page left mid-way) */
  private skipped = 0;

  constructor(
    readonly settings: TotalSettings,
    private readonly warning: TotalWarning,
  ) {}

  /** A job instance starts: its total is unknown until its first response arrives. */
  start(): void {
    this.reset();
    this.awaiting = true;
  }

  reset(): void {
    this.awaiting = false;
    this.value = undefined;
    this.pageSize = 0;
    this.skipped = 0;
  }

  /** The first response is still awaited: the number of pages is not known yet, so none may be predicted. */
  get pending(): boolean {
    return this.awaiting;
  }

  /**
   * A received page of the instance; the first one gives the total. `limit` is the page size the
   * method sends (null: none, then the first page's record count is taken); `skipped` the records
   * before this page in the whole collection.
   */
  observe(job: PageRequest, page: ReceivedPage, limit: number | null, skipped: number): void {
    if (!this.awaiting) return;
    this.awaiting = false;
    this.pageSize = limit ?? page.data.length;
    this.skipped = skipped;
    const reading = readTotal(page.response, this.settings.path);
    if ('total' in reading) {
      this.value = reading.total;
      return;
    }
    this.warning.report(
      `Job endpoint ${displayText(job.endpoint.slice(0, 200))}: ${this.settings.option} ${displayId(this.settings.path)} ${reading.problem}; ` +
        'ignored: the job pages on until a short or empty page (or a stop condition)',
    );
  }

  /** Pages of the whole collection, counted from its first; undefined while unknown. */
  pages(): number | undefined {
    if (this.value === undefined) return undefined;
    if (this.settings.kind === 'pages') return this.value;
    // without a page size (a first page with no records) only the natural end is left
    return this.pageSize > 0 ? Math.ceil(this.value / this.pageSize) : undefined;
  }

  /** Records of the whole collection (by pages: full pages, an upper bound); undefined while unknown. */
  records(): number | undefined {
    if (this.value === undefined) return undefined;
    return this.settings.kind === 'records' ? this.value : this.value * this.pageSize;
  }

  /** Records this job instance will have in all (the progress line's ETA). */
  expectedRecords(): number | undefined {
    const records = this.records();
    return records === undefined ? undefined : Math.max(0, records - this.skipped);
  }

  /** "10 pages at meta.pages" / "95 records at meta.total" for a stop reason. */
  describe(): string {
    const count = this.value ?? 0;
    const what = this.settings.kind === 'pages' ? plural(count, 'page') : plural(count, 'record');
    return `${what} at ${displayId(this.settings.path)}${this.settings.kind === 'records' ? `, ${groupThousands(this.pageSize)} per page` : ''}`;
  }
}
