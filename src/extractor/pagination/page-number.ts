import type { JsonValue } from '../../json/index.js';
import { phpEmpty } from '../../php/index.js';
import { plural } from '../../common/text.js';
import { numericLimit, type PaginationOptions } from './options.js';
import { stopAndReset, type Stop, withParams, type PageRequest, type Paginator, type ReceivedPage } from './paginator.js';

export interface PageNumberSettings {
  pageParam: string;
  limitParam: string;
  /** configured page size, an integer as GE sends it ("10" → 10); null = no limit */
  limit: number | null;
  firstPage: number;
  firstPageParams: boolean;
}

export function pageNumberSettings(options: PaginationOptions): PageNumberSettings {
  const limit = options.limit();
  return {
    pageParam: options.string('pageParam', 'page'),
    limitParam: options.string('limitParam', 'limit'),
    limit,
    firstPage: options.int('firstPage', 1),
    firstPageParams: options.bool('firstPageParams', true),
  };
}

/**
 * `pagenum`: page `firstPage`, then +1 per request; the page size (if any) goes in `limitParam`;
 * a job's own `params[limitParam]` overrides it. Stops on underflow (fewer records than the
 * limit), or — without a limit — on an empty page.
 */
export class PageNumberPaginator implements Paginator {
  private page: number;

  constructor(
    readonly settings: PageNumberSettings,
    private readonly path: string,
  ) {
    this.page = settings.firstPage;
  }

  describe(job: PageRequest): string {
    const s = this.settings;
    const size = this.limitFor(job);
    return `pagenum (${s.pageParam}=${s.firstPageParams ? s.firstPage : s.firstPage + 1}.., ${size === null ? 'no limit' : `${s.limitParam}=${size}`})`;
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
    return this.settings.firstPageParams ? this.requestFor(job, this.page) : job;
  }

  next(job: PageRequest, page: ReceivedPage): PageRequest | Stop {
    const stop = this.stopReason(job, page.data.length);
    if (stop) return stopAndReset(this, stop);
    this.page++;
    return this.requestFor(job, this.page);
  }

  /** Known only with a limit: without one, any page may be the last (an empty one). */
  predict(job: PageRequest, count: number): PageRequest[] {
    if (this.limitFor(job) === null) return [];
    return Array.from({ length: count }, (_, i) => this.requestFor(job, this.page + 1 + i));
  }

  /** Why a page with `count` records is the last one, or null to go on. */
  stopReason(job: PageRequest, count: number): string | null {
    const size = this.limitFor(job);
    if (size === null) return count === 0 ? 'empty page (no limit is set)' : null;
    return count < size ? `underflow: the page had ${plural(count, 'record')}, less than the limit ${size}` : null;
  }

  reset(): void {
    this.page = this.settings.firstPage;
  }

  clone(): Paginator {
    return new PageNumberPaginator(this.settings, this.path);
  }
}
