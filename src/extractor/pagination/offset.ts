import { ConfigError } from '../../common/errors.js';
import { phpEmpty, phpIntCast } from '../../php/index.js';
import { plural } from '../../common/text.js';
import { numericLimit, type PaginationOptions } from './options.js';
import { stopAndReset, type Stop, withParams, type PageRequest, type Paginator, type ReceivedPage } from './paginator.js';

export interface OffsetSettings {
  limit: number;
  limitParam: string;
  offsetParam: string;
  firstPageParams: boolean;
  offsetFromJob: boolean;
}

export function offsetSettings(options: PaginationOptions): OffsetSettings {
  const limit = options.limit();
  if (limit === null) {
    throw new ConfigError(`${options.path}.limit`, 'is required for offset pagination', 'Set the page size, e.g. "limit": 100');
  }
  return {
    limit,
    limitParam: options.string('limitParam', 'limit'),
    offsetParam: options.string('offsetParam', 'offset'),
    firstPageParams: options.bool('firstPageParams', true),
    offsetFromJob: options.bool('offsetFromJob', false),
  };
}

/**
 * `offset`: `limitParam` = page size, `offsetParam` = 0, limit, 2·limit…; the start offset may come
 * from the job (`offsetFromJob`). Stops when a page has fewer records than the limit.
 */
export class OffsetPaginator implements Paginator {
  private offset = 0;

  constructor(
    readonly settings: OffsetSettings,
    private readonly path: string,
  ) {}

  describe(job: PageRequest): string {
    const s = this.settings;
    return `offset (${s.limitParam}=${this.limitFor(job)}, ${s.offsetParam}=${this.startOffset(job)}..)`;
  }

  limitFor(job: PageRequest): number {
    const own = job.params.get(this.settings.limitParam);
    return phpEmpty(own) ? this.settings.limit : numericLimit(own!, `${this.path} (job params.${this.settings.limitParam})`);
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
    return this.settings.firstPageParams ? this.requestFor(job, this.offset) : job;
  }

  next(job: PageRequest, page: ReceivedPage): PageRequest | Stop {
    const stop = this.stopReason(job, page.data.length);
    if (stop) return stopAndReset(this, stop);
    this.offset += this.limitFor(job);
    return this.requestFor(job, this.offset);
  }

  predict(job: PageRequest, count: number): PageRequest[] {
    const limit = this.limitFor(job);
    return Array.from({ length: count }, (_, i) => this.requestFor(job, this.offset + limit * (i + 1)));
  }

  stopReason(job: PageRequest, count: number): string | null {
    const limit = this.limitFor(job);
    return count < limit ? `underflow: the page had ${plural(count, 'record')}, less than the limit ${limit}` : null;
  }

  reset(): void {
    this.offset = 0;
  }

  clone(): Paginator {
    return new OffsetPaginator(this.settings, this.path);
  }
}
