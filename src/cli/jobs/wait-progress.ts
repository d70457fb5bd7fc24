import { displayText } from '../../common/log-text.js';
import type { JobView } from './job-view.js';

/** How often a long wait says it is still waiting, at most. */
export const PROGRESS_EVERY_MS = 12_000;
/** A job still pending this long while the store's registry shows no worker: said once. */
export const NO_WORKER_AFTER_MS = 2000;
/** A server's job still `created` this long (whether it runs workers cannot be asked): said once. */
export const NOT_STARTED_AFTER_MS = 15_000;
/** Characters of the newest log line a progress line shows. */
const LINE_CHARS = 100;

/** `65_000` → `1m05s` */
export function elapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/** Who runs the jobs, as the wait can tell: the advice when nothing does, null when something does. */
export type WorkerCheck = () => Promise<string | null | undefined>;

/**
 * What `gex jobs run --wait` tells a person on stderr while it waits: a line whenever the job's
 * status changes and, while it does not, one at most every PROGRESS_EVERY_MS with the time waited
 * and the job's newest log line (already masked by the run; cut short). A job that does not start
 * is explained once: on the embedded store, when no worker pool of the store runs jobs (the
 * store's worker registry); against a server, which cannot be asked, when it stays `created`
 * NOT_STARTED_AFTER_MS. The clock is injected.
 */
export class WaitProgress {
  private status: string | undefined;
  private readonly started: number;
  private lastLine: number;
  private explained = false;

  constructor(
    private readonly write: (line: string) => void,
    private readonly now: () => number = Date.now,
    private readonly everyMs = PROGRESS_EVERY_MS,
  ) {
    this.started = now();
    this.lastLine = this.started;
  }

  /**
   * The job as last read; `newestLine` is asked only when a progress line is due; `workers`
   * (the embedded store's registry; undefined against a server) only while the job has not started.
   */
  async seen(job: JobView, newestLine: () => Promise<string | undefined>, workers?: WorkerCheck): Promise<void> {
    const now = this.now();
    if (job.status !== this.status) {
      this.status = job.status;
      this.lastLine = now;
      this.write(`Job ${job.id}: ${displayText(job.status)}`);
    }
    if (job.isFinished) return;
    if (await this.explain(job, now, workers)) return;
    if (now - this.lastLine < this.everyMs) return;
    this.lastLine = now;
    const newest = await newestLine();
    const cut = newest === undefined ? '' : newest.length > LINE_CHARS ? `${newest.slice(0, LINE_CHARS)}…` : newest;
    this.write(
      `Job ${job.id}: ${displayText(job.status)}, waited ${elapsed(now - this.started)}${cut ? `; last log line: ${displayText(cut)}` : ''}`,
    );
  }

  /** Says once why a job that does not start may never start; whether it said so now. */
  private async explain(job: JobView, now: number, workers: WorkerCheck | undefined): Promise<boolean> {
    const pending = job.status === 'created' || job.status === 'waiting';
    if (this.explained || !pending) return false;
    const waited = now - this.started;
    if (workers) {
      if (waited < NO_WORKER_AFTER_MS) return false;
      const advice = await workers();
      if (!advice) return false;
      this.explained = true;
      this.write(`Job ${job.id}: ${displayText(job.status)}, and ${advice}. Still waiting (Ctrl-C stops waiting).`);
      return true;
    }
    if (job.status !== 'created' || waited < NOT_STARTED_AFTER_MS) return false;
    this.explained = true;
    this.write(
      `Job ${job.id}: not started after ${elapsed(waited)}: the server's workers may all be busy, or it runs none (a gex serve --workers 0, or a SQLite store whose server has no workers). Still waiting (Ctrl-C stops waiting).`,
    );
    return true;
  }
}
