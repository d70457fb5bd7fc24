import type { Logger } from '../common/logger.js';
import { thisProcessText } from '../common/process-liveness.js';
import { removeFoldersOfLostJob, removeOrphanedJobFolders } from './job-folder.js';
import type { QueueJob } from './job-record.js';
import type { JobRepository } from './job-repository.js';
import { lostWorkerOutcome } from './job-result.js';
import type { WorkerRegistry } from './worker-registry.js';

/** how often a SQLite store's pool looks for jobs whose worker is gone (another server of the store died) */
export const RECOVERY_INTERVAL_MS = 5000;

/** A job a worker claimed: it is `processing`, this worker's to run. */
export interface ClaimedJob {
  job: QueueJob;
  /** after the job's end is recorded: gives up what held the job for this worker */
  release(): Promise<void>;
}

/** Where a worker pool's jobs come from, and how jobs of dead workers are found. */
export interface JobSource {
  /** Ends what dead workers left running, then starts telling `wake` when there may be work. */
  start(wake: () => void): Promise<void>;
  /** Claims up to `max` jobs for `worker`. */
  claim(max: number, worker: string): Promise<ClaimedJob[]>;
  stop(): Promise<void>;
}

/**
 * This process as a job's worker (a job's `worker`): its identity — host, pid, start mark and a
 * random instance mark — so that a process restarted with the same pid (PID 1 in a container)
 * is not taken for the one that died.
 */
export function workerName(): string {
  return thisProcessText();
}

/**
 * Ends the jobs whose worker is gone (or retries them), says so, and removes the job folders such
 * workers of this host left (their config, state and tables); the ids ended.
 */
export async function endLostJobs(
  jobs: JobRepository,
  lost: ReadonlyArray<{ id: number; worker: string | null }>,
  logger: Logger,
): Promise<number[]> {
  const ended: number[] = [];
  let removed = 0;
  for (const { id, worker } of lost) {
    if (!(await jobs.finish(id, lostWorkerOutcome))) continue;
    ended.push(id);
    logger.warn(`Job ${id}: its worker stopped while it ran: ended (or retried)`);
    removed += (await removeFoldersOfLostJob(id, worker)).length;
  }
  if (ended.length) removed += (await removeOrphanedJobFolders()).length;
  sayRemoved(removed, logger);
  return ended;
}

/** Removes the folders that dead workers of this PID namespace left (see job-folder.ts). */
export async function sweepJobFolders(logger: Logger): Promise<void> {
  sayRemoved((await removeOrphanedJobFolders()).length, logger);
}

function sayRemoved(count: number, logger: Logger): void {
  if (count) logger.info(`Removed ${count} job folders left by a worker that stopped (their data, state and tables)`);
}

/**
 * The embedded store's source (one machine, SQLite): claims the oldest runnable job straight from
 * the store, woken by the server when a job is created. A job is lost when the process named as
 * its worker is gone: a process of this host that no longer runs (or that has this process's pid
 * but not its identity: a restarted container), one of another host that the worker registry
 * has not seen for a while. Looked for when the pool starts and every RECOVERY_INTERVAL_MS.
 */
export class StoreClaimSource implements JobSource {
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<unknown> | undefined;

  constructor(
    private readonly jobs: JobRepository,
    private readonly registry: WorkerRegistry,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    await this.recoverLost();
    this.timer = setInterval(() => {
      this.checking ??= this.recoverLost()
        .catch((error: unknown) => this.logger.warn(`Job recovery: ${(error as Error).message}`))
        .finally(() => (this.checking = undefined));
    }, RECOVERY_INTERVAL_MS);
    this.timer.unref();
  }

  /** Jobs left running by a worker that is gone: ended (or retried); their ids. */
  async recoverLost(): Promise<number[]> {
    const lost: Array<{ id: number; worker: string | null }> = [];
    for (const job of await this.jobs.running()) if (await this.registry.gone(job.worker)) lost.push(job);
    return endLostJobs(this.jobs, lost, this.logger);
  }

  async claim(max: number, worker: string): Promise<ClaimedJob[]> {
    const claimed: ClaimedJob[] = [];
    while (claimed.length < max) {
      const job = await this.jobs.claimNext(worker);
      if (!job) break;
      claimed.push({ job, release: () => Promise.resolve() });
    }
    return claimed;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.checking;
  }
}
