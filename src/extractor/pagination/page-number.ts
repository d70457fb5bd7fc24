import type { JsonValue } from '../../json/index.js';
import { phpEmpty } from '../../php/index.js';
import { plural } from '../../common/text.js';
import { describeTotal, FirstPageTotal, totalSettings, TotalWarning, type TotalSettings } from './first-page-total.js';
import { numericLimit, type PaginationOptions } from './options.js';
import {
  stopAndReset,
  type Stop,
  withParams,
  type PageRequest,
  type Paginator,
  type ReceivedPage,
} from './paginator.js';

export interface PageNumberSettings {
  pageParam: string;
  limitParam: string;
  /** configured page size, an integer as GE sends it ("10" → 10); null = no limit */
  limit: number | null;
  firstPage: number;
  firstPageParams: boolean;
  /** totalPath / totalPagesPath (gex): the number of records or pages, from the first response */
  total: TotalSettings | null;
}

export function pageNumberSettings(options: PaginationOptions): PageNumberSettings {
  const limit = options.limit();
  return {
    pageParam: options.string('pageParam', 'page'),
    limitParam: options.string('limitParam', 'limit'),
    limit,
    firstPage: options.int('firstPage', 1),
    firstPageParams: options.bool('firstPageParams', true),
    total: totalSettings(options),
  };
}

/**
 * `pagenum`: page `firstPage`, then +1 per request; the page size (if any) goes in `limitParam`;
 * a job's own `params[limitParam]` overrides it. Stops on underflow (fewer records than the
 * limit), or — without a limit — on an empty page; with a total from the first response, also
 * after the last page by it (page `firstPage + pages − 1`), whichever comes first.
 */
export class PageNumberPaginator implements Paginator {
  private page: number;
  private readonly total: FirstPageTotal | null;

  constructor(
    readonly settings: PageNumberSettings,
    private readonly path: string,
    private readonly warning = new TotalWarning(() => undefined),
  ) {
    this.page = settings.firstPage;
    this.total = settings.total ? new FirstPageTotal(settings.total, warning) : null;
  }

  describe(job: PageRequest): string {
    const s = this.settings;
    const size = this.limitFor(job);
    return `pagenum (${s.pageParam}=${s.firstPageParams ? s.firstPage : s.firstPage + 1}.., ${size === null ? 'no limit' : `${s.limitParam}=${size}`}${describeTotal(s.total)})`;
  }

  /**
   * The job's limit override if set (PHP-non-empty), else the configured one — always sent as the
   * integer, never as written: GE sends `"02"` as `limit=2` and `"10"` as `"limit":10` in a JSON body.
   */
  limitFor(job: PageRequest): number | null {
    const own = job.params.get(this.settings.limitParam);
    if (!phpEmpty(own)) return numericLimit(own!, `${this.path} (job params.${this.settings.limitParam})`);
    return this.settings.limit;
  }

  /** The request for a given page number (also used to prefetch pages in parallel). */
  requestFor(job: PageRequest, page: number): PageRequest {
    const size = this.limitFor(job);
    const values: Array<[string, JsonValue]> = [[this.settings.pageParam, page]];
    if (size !== null) values.push([this.settings.limitParam, size]);
    return withParams(job, values);
  }

  /** The current page (firstPage unless a stop decorator left a shared child paginator mid-way). */
  first(job: PageRequest): PageRequest {
    this.total?.start();
    return this.settings.firstPageParams ? this.requestFor(job, this.page) : job;
  }

  next(job: PageRequest, page: ReceivedPage): PageRequest | Stop {
    const size = this.limitFor(job);
    this.total?.observe(job, page, size, (this.page - this.settings.firstPage) * (size ?? page.data.length));
    const stop = this.stopReason(job, page.data.length);
    if (stop) return stopAndReset(this, stop, size === null ? 'emptyPage' : 'underflow');
    const last = this.lastPage();
    if (last !== undefined && this.page >= last)
      return stopAndReset(this, `total: page ${this.page} was the last (${this.total!.describe()})`, 'total');
    this.page++;
    return this.requestFor(job, this.page);
  }

  /**
   * Known with a limit, or once the first response told the number of pages; never past the last
   * page by a total, and nothing while the first response (which may tell it) is awaited.
   */
  predict(job: PageRequest, count: number): PageRequest[] {
    if (this.total?.pending) return [];
    const last = this.lastPage();
    if (last === undefined && this.limitFor(job) === null) return [];
    const length = last === undefined ? count : Math.min(count, Math.max(0, last - this.page));
    return Array.from({ length }, (_, i) => this.requestFor(job, this.page + 1 + i));
  }

  expectedRecords(): number | undefined {
    return this.total?.expectedRecords();
  }

  /** The number of the last page by the total; undefined while unknown. */
  private lastPage(): number | undefined {
    const pages = this.total?.pages();
    return pages === undefined ? undefined : this.settings.firstPage + pages - 1;
  }

  /** Why a page with `count` records is the last one, or null to go on. */
  stopReason(job: PageRequest, count: number): string | null {
    const size = this.limitFor(job);
    if (size === null) return count === 0 ? 'empty page (no limit is set)' : null;
    return count < size ? `underflow: the page had ${plural(count, 'record')}, less than the limit ${size}` : null;
  }

  reset(): void {
    this.page = this.settings.firstPage;
    this.total?.reset();
  }

  clone(): Paginator {
    return new PageNumberPaginator(this.settings, this.path, this.warning);
  }
}
