import type { ProgressLine } from '../common/progress-line.js';
import { groupThousands } from '../common/text.js';

/** Counters of one extraction, shown live on a terminal and reported at the end. */
export class RunProgress {
  pages = 0;
  records = 0;
  private readonly started = Date.now();

  constructor(private readonly line?: ProgressLine) {}

  page(job: string, records: number): void {
    this.pages++;
    this.records += records;
    if (!this.line?.enabled) return;
    const seconds = (Date.now() - this.started) / 1000;
    const rate = seconds > 0 ? Math.round(this.records / seconds) : 0;
    this.line.update(`${job}: ${groupThousands(this.pages)} pages, ${groupThousands(this.records)} records, ${groupThousands(rate)} records/s`);
  }

  get elapsedMs(): number {
    return Date.now() - this.started;
  }

  done(): void {
    this.line?.clear();
  }
}
