import { displayText } from '../../common/log-text.js';
import type { JobView } from './job-view.js';

/** How often a long wait says it is still waiting, at most. */
export const PROGRESS_EVERY_MS = 12_000;
/** Characters of the newest log line a progress line shows. */
const LINE_CHARS = 100;

/** `65_000` → `1m05s` */
export function elapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/**
 * What `gex jobs run --wait` tells a person on stderr while it waits: a line whenever the job's
 * status changes and, while it does not, one at most every PROGRESS_EVERY_MS with the time waited
 * and the job's newest log line (already masked by the run; cut short). The clock is injected.
 */
export class WaitProgress {
  private status: string | undefined;
  private readonly started: number;
  private lastLine: number;

  constructor(
    private readonly write: (line: string) => void,
    private readonly now: () => number = Date.now,
    private readonly everyMs = PROGRESS_EVERY_MS,
  ) {
    this.started = now();
    this.lastLine = this.started;
  }

  /** The job as last read; `newestLine` is asked only when a progress line is due. */
  async seen(job: JobView, newestLine: () => Promise<string | undefined>): Promise<void> {
    const now = this.now();
    if (job.status !== this.status) {
      this.status = job.status;
      this.lastLine = now;
      return this.write(`Job ${job.id}: ${displayText(job.status)}`);
    }
    if (job.isFinished || now - this.lastLine < this.everyMs) return;
    this.lastLine = now;
    const newest = await newestLine();
    const cut = newest === undefined ? '' : newest.length > LINE_CHARS ? `${newest.slice(0, LINE_CHARS)}…` : newest;
    this.write(
      `Job ${job.id}: ${displayText(job.status)}, waited ${elapsed(now - this.started)}${cut ? `; last log line: ${displayText(cut)}` : ''}`,
    );
  }
}
