import type { PageRequest, Paginator, ReceivedPage, Stop } from '../paginator.js';

/**
 * What every stop condition shares (Keboola juicer's AbstractScrollerDecorator): it wraps a
 * paginator and forwards everything to it, deciding only whether a received page is the last.
 * A condition supplies its label, its stop reason and how to copy itself around another paginator.
 */
export abstract class StopCondition implements Paginator {
  constructor(protected readonly inner: Paginator) {}

  /** how the log names the condition, e.g. "forceStop (at most 3 pages)" */
  protected abstract label(): string;

  /** why the job ends with this page, or null to let the wrapped paginator decide */
  protected abstract stopFor(page: ReceivedPage): Stop | null;

  /** the same condition (settings, clock) around another paginator */
  protected abstract around(inner: Paginator): Paginator;

  /** the job's first request is about to go out: restart what counts per job */
  protected onFirst(): void {}

  /** the paginator is reused for another job */
  protected onReset(): void {}

  describe(job: PageRequest): string {
    return `${this.inner.describe(job)}; ${this.label()}`;
  }

  first(job: PageRequest): PageRequest {
    this.onFirst();
    return this.inner.first(job);
  }

  next(job: PageRequest, page: ReceivedPage): PageRequest | Stop {
    return this.stopFor(page) ?? this.inner.next(job, page);
  }

  /** A condition only ends pagination early: requests predicted past the end are fetched and discarded. */
  predict(job: PageRequest, count: number): PageRequest[] {
    return this.inner.predict?.(job, count) ?? [];
  }

  expectedRecords(): number | undefined {
    return this.inner.expectedRecords?.();
  }

  reset(): void {
    this.onReset();
    this.inner.reset();
  }

  clone(): Paginator {
    return this.around(this.inner.clone());
  }
}
