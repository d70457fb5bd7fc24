import { ConfigError } from '../../common/errors.js';
import { phpEmpty, phpIntCast } from '../../php/index.js';
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

export interface OffsetSettings {
  limit: number;
  limitParam: string;
  offsetParam: string;
  firstPageParams: boolean;
  offsetFromJob: boolean;
  /** totalPath / totalPagesPath (gex): the number of records or pages, from the first response */
  total: TotalSettings | null;
}

export function offsetSettings(options: PaginationOptions): OffsetSettings {
  const limit = options.limit();
  if (limit === null) {
    throw new ConfigError(
      `${options.path}.limit`,
      'is required for offset pagination',
      'Set the page size, e.g. "limit": 100',
    );
  }
  return {
    limit,
    limitParam: options.string('limitParam', 'limit'),
    offsetParam: options.string('offsetParam', 'offset'),
    firstPageParams: options.bool('firstPageParams', true),
    offsetFromJob: options.bool('offsetFromJob', false),
    total: totalSettings(options),
  };
}

/**
 * `offset`: `limitParam` = page size, `offsetParam` = 0, limit, 2·limit…; the start offset may come
 * from the job (`offsetFromJob`). Stops when a page has fewer records than the limit; with a total
 * from the first response, also after the page that reaches it (offset + limit ≥ records, counted
 * from offset 0), whichever comes first.
 */
export class OffsetPaginator implements Paginator {
  private offset = 0;
  private readonly total: FirstPageTotal | null;

  constructor(
    readonly settings: OffsetSettings,
    private readonly path: string,
    private readonly warning = new TotalWarning(() => undefined),
  ) {
    this.total = settings.total ? new FirstPageTotal(settings.total, warning) : null;
  }

  describe(job: PageRequest): string {
    const s = this.settings;
    return `offset (${s.limitParam}=${this.limitFor(job)}, ${s.offsetParam}=${this.startOffset(job)}..${describeTotal(s.total)})`;
  }

  limitFor(job: PageRequest): number {
    const own = job.params.get(this.settings.limitParam);
    return phpEmpty(own)
      ? this.settings.limit
      : numericLimit(own!, `${this.path} (job params.${this.settings.limitParam})`);
  }

  /** The job's own offset when `offsetFromJob` is on and it is set, else null. */
  jobOffset(job: PageRequest): number | null {
    const own = job.params.get(this.settings.offsetParam);
    return this.settings.offsetFromJob && !phpEmpty(own) ? phpIntCast(own) : null;
  }

  startOffset(job: PageRequest): number {
    return this.jobOffset(job) ?? 0;
  }

  /** The request for a given offset (also used to prefetch pages in parallel). */
  requestFor(job: PageRequest, offset: number): PageRequest {
    return withParams(job, [
      [this.settings.limitParam, this.limitFor(job)],
      [this.settings.offsetParam, offset],
    ]);
  }

  /** GE sets the offset here only from the job; otherwise the current offset is used as it is. */
  first(job: PageRequest): PageRequest {
    this.offset = this.jobOffset(job) ?? this.offset;
    this.total?.start();
    return this.settings.firstPageParams ? this.requestFor(job, this.offset) : job;
  }

  next(job: PageRequest, page: ReceivedPage): PageRequest | Stop {
    const limit = this.limitFor(job);
    this.total?.observe(job, page, limit, this.offset);
    const stop = this.stopReason(job, page.data.length);
    if (stop) return stopAndReset(this, stop, 'underflow');
    const records = this.total?.records();
    if (records !== undefined && this.offset + limit >= records) {
      return stopAndReset(
        this,
        `total: the page at offset ${this.offset} was the last (${this.total!.describe()})`,
        'total',
      );
    }
    this.offset += limit;
    return this.requestFor(job, this.offset);
  }

  /** The next offsets — none past the last page by a total, and none while the first response (which may tell it) is awaited. */
  predict(job: PageRequest, count: number): PageRequest[] {
    if (this.total?.pending) return [];
    const limit = this.limitFor(job);
    const records = this.total?.records();
    const left = records === undefined ? count : Math.max(0, Math.ceil((records - this.offset) / limit) - 1);
    return Array.from({ length: Math.min(count, left) }, (_, i) => this.requestFor(job, this.offset + limit * (i + 1)));
  }

  expectedRecords(): number | undefined {
    return this.total?.expectedRecords();
  }

  stopReason(job: PageRequest, count: number): string | null {
    const limit = this.limitFor(job);
    return count < limit ? `underflow: the page had ${plural(count, 'record')}, less than the limit ${limit}` : null;
  }

  reset(): void {
    this.offset = 0;
    this.total?.reset();
  }

  clone(): Paginator {
    return new OffsetPaginator(this.settings, this.path, this.warning);
  }
}
