import PQueue from 'p-queue';

/**
 * How many requests may be in flight, adapted to the API's rate limiting (AIMD, as TCP): a
 * throttled response (429, or any response carrying a retry header) halves the limit, each
 * successful one adds 1/limit — so the limit grows by one per round of successes up to the
 * configured maximum. Only a request started after the last cut can cut again, so a burst of 429s
 * from one round counts once. Requests wait in a p-queue whose concurrency is the current limit.
 */
export class AdaptiveConcurrency {
  private readonly queue: PQueue;
  private limit: number;
  private lastCutAt = 0;
  /** the lowest limit reached and the history of changes, for logs and benchmarks */
  readonly changes: Array<{ at: number; limit: number }> = [];

  constructor(
    readonly maximum: number,
    /** milliseconds; tests pass a fake clock to tell rounds apart without waiting */
    private readonly now: () => number = Date.now,
  ) {
    this.limit = maximum;
    this.queue = new PQueue({ concurrency: maximum });
  }

  /** The whole number of requests allowed in flight now. */
  get current(): number {
    return Math.max(1, Math.floor(this.limit));
  }

  /** Runs one attempt in a free slot; `startedAt` tells `throttled()` which round it belonged to. */
  run<T>(attempt: (startedAt: number) => Promise<T>): Promise<T> {
    return this.queue.add<T>(() => attempt(this.now()));
  }

  throttled(startedAt: number): void {
    if (startedAt < this.lastCutAt || this.limit <= 1) return;
    this.lastCutAt = this.now();
    this.set(Math.max(1, this.limit / 2));
  }

  succeeded(): void {
    if (this.limit < this.maximum) this.set(Math.min(this.maximum, this.limit + 1 / this.current));
  }

  private set(limit: number): void {
    const before = this.current;
    this.limit = limit;
    if (this.current !== before) {
      this.queue.concurrency = this.current;
      this.changes.push({ at: this.now(), limit: this.current });
    }
  }
}
