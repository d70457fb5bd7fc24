import type { ProgressLine } from '../common/progress-line.js';
import { displayText } from '../common/log-text.js';
import { formatClock, groupThousands } from '../common/text.js';

/** What the progress line shows at one moment. */
export interface ProgressSnapshot {
  /** the job whose page arrived last (a child job's label while children run) */
  job: string;
  elapsedMs: number;
  pages: number;
  /** every record written so far, child jobs' included */
  records: number;
  /** the records the run will have in all, when something knows it (see RunProgress.expectRecords) */
  expectedRecords?: number;
}

/**
 * The progress line's text: `[0:12] users: 120 pages, 12,000 records, 1,000 records/s, ETA 0:30`.
 * The rate is over the whole run so far; the ETA is shown only with a known total and a rate.
 */
export function formatProgress(s: ProgressSnapshot): string {
  const seconds = s.elapsedMs / 1000;
  const rate = seconds > 0 ? s.records / seconds : 0;
  let text =
    `[${formatClock(s.elapsedMs)}] ${s.job === '' ? '' : `${s.job}: `}${groupThousands(s.pages)} ${s.pages === 1 ? 'page' : 'pages'}, ` +
    `${groupThousands(s.records)} ${s.records === 1 ? 'record' : 'records'}, ${groupThousands(Math.round(rate))} records/s`;
  const eta = etaMs(s.records, s.expectedRecords, rate);
  if (eta !== undefined) text += `, ETA ${formatClock(eta)}`;
  return text;
}

/** Time left at the current rate; none without a total or before the first record. */
export function etaMs(records: number, expected: number | undefined, ratePerSecond: number): number | undefined {
  if (expected === undefined || !(ratePerSecond > 0)) return undefined;
  return (Math.max(0, expected - records) / ratePerSecond) * 1000;
}

export interface RunProgressOptions {
  /** the clock in milliseconds (tests pin it) */
  now?: () => number;
  /** how often the line is redrawn while no page arrives, so elapsed time keeps moving (0: never) */
  tickMs?: number;
}

/** Counters of one extraction, shown live on a terminal and reported at the end. */
export class RunProgress {
  pages = 0;
  records = 0;
  private job = '';
  private expected: number | undefined;
  private readonly now: () => number;
  private readonly started: number;
  private readonly ticker: NodeJS.Timeout | undefined;

  constructor(
    private readonly line?: ProgressLine,
    options: RunProgressOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.started = this.now();
    const tickMs = options.tickMs ?? 1000;
    // a slow API or a long retry wait must not look like a hung run; unref: never keeps the process alive
    if (line?.enabled && tickMs > 0) this.ticker = setInterval(() => this.draw(true), tickMs).unref();
  }

  /** A page of `job` was written with `records` records. `job` is configuration text: made safe here. */
  page(job: string, records: number): void {
    this.pages++;
    this.records += records;
    this.job = displayText(job);
    this.draw(false);
  }

  /**
   * The total records the run will have once the current job ends, when its paginator knows where
   * it ends (a limitStop: its count, or the total an API reports at its field); undefined forgets it.
   */
  expectRecords(total: number | undefined): void {
    this.expected = total;
  }

  snapshot(): ProgressSnapshot {
    return {
      job: this.job,
      elapsedMs: this.elapsedMs,
      pages: this.pages,
      records: this.records,
      expectedRecords: this.expected,
    };
  }

  get elapsedMs(): number {
    return this.now() - this.started;
  }

  done(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.line?.clear();
  }

  private draw(force: boolean): void {
    if (!this.line?.enabled) return;
    this.line.update(formatProgress(this.snapshot()), force);
  }
}
