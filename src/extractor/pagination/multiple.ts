import { ConfigError } from '../../common/errors.js';
import { phpEmpty } from '../../php/index.js';
import { NoPagination } from './no-pagination.js';
import type { PageRequest, Paginator, ReceivedPage, Stop } from './paginator.js';

const NONE = new NoPagination();

/**
 * `multiple`: named scrollers (each a full pagination config with its own stop conditions); a job
 * uses the one its `scroller` names, else `default`, else none. Like GE, the choice is made at
 * each request, so an unknown name fails when a job uses it.
 */
export class MultiplePaginator implements Paginator {
  /** the scroller the last first/next used */
  private last: Paginator | undefined;

  constructor(
    private readonly scrollers: ReadonlyMap<string, Paginator>,
    private readonly defaultName: string | null,
    /** the `scroller` of the job the paginator was made for (used when the request does not say) */
    private readonly jobScroller: string | null,
    private readonly path: string,
  ) {}

  describe(job: PageRequest): string {
    const name = this.ownName(job) ?? this.defaultName;
    return name === null
      ? 'multiple: no scroller for this job (no default)'
      : `multiple: '${name}' → ${this.pick(job).describe(job)}`;
  }

  first(job: PageRequest): PageRequest {
    this.last = this.pick(job);
    return this.last.first(job);
  }

  next(job: PageRequest, page: ReceivedPage): PageRequest | Stop {
    this.last = this.pick(job);
    return this.last.next(job, page);
  }

  reset(): void {
    for (const scroller of this.scrollers.values()) scroller.reset();
  }

  predict(job: PageRequest, count: number): PageRequest[] {
    return this.pick(job).predict?.(job, count) ?? [];
  }

  /** The scroller of the job that asked last (the job loop asks after each page of it). */
  expectedRecords(): number | undefined {
    return this.last?.expectedRecords?.();
  }

  clone(): Paginator {
    const copies = new Map([...this.scrollers].map(([name, scroller]) => [name, scroller.clone()]));
    return new MultiplePaginator(copies, this.defaultName, this.jobScroller, this.path);
  }

  /** The job's own `scroller` (PHP-empty = none). */
  private ownName(job: PageRequest): string | null {
    const own = job.scroller !== undefined ? job.scroller : this.jobScroller;
    return phpEmpty(own) ? null : own!;
  }

  private pick(job: PageRequest): Paginator {
    const own = this.ownName(job);
    const name = own ?? this.defaultName;
    if (name === null) return NONE;
    const scroller = this.scrollers.get(name);
    if (scroller) return scroller;
    const defined = `scrollers defined: ${[...this.scrollers.keys()].join(', ')}`;
    if (own !== null) {
      throw new ConfigError(
        `${this.path}.scrollers`,
        `has no scroller '${own}', which a job's "scroller" names (${defined})`,
        'Set the job\'s "scroller" to one of them',
      );
    }
    throw new ConfigError(
      `${this.path}.default`,
      `names the scroller '${name}', which does not exist (${defined})`,
      'Set it to one of them',
    );
  }
}
