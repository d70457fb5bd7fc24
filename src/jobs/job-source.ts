import { hostname } from 'node:os';
import type { Logger } from '../common/logger.js';
import { holderLiveness } from '../common/process-liveness.js';
import type { QueueJob } from './job-record.js';
import type { JobRepository } from './job-repository.js';
import { resultWithMessage } from './job-result.js';

export const WORKER_STOPPED = 'The job ended with an error: the worker stopped while it ran (its process is gone).';

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

/** This process as a worker: host and pid (a job's `worker`). */
export function workerName(): string {
  return `${hostname()}:${process.pid}`;
}

/** A lost worker's job: an application error (retried when the job has retries left). */
export const lostWorkerOutcome = () => ({
  status: 'error' as const,
  result: resultWithMessage(WORKER_STOPPED, 'application'),
});

/**
 * The embedded store's source (one machine, SQLite): claims the oldest runnable job straight from
 * the store, woken by the server when a job is created. A job is lost when the process named as its
 * worker is gone from this host — found when a server starts.
 */
export class StoreClaimSource implements JobSource {
  constructor(
    private readonly jobs: JobRepository,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    await this.recoverLost();
  }

  /** Jobs left running by a process of this host that is gone: ended (or retried); their ids. */
  async recoverLost(): Promise<number[]> {
    const lost = (await this.jobs.running()).filter(({ worker }) => {
      const [host, pid] = (worker ?? '').split(/:(?=\d+$)/);
      return worker === null || (Number(pid) !== process.pid && holderLiveness({ pid: Number(pid), host }) === 'dead');
    });
    for (const { id } of lost) {
      await this.jobs.finish(id, lostWorkerOutcome);
      this.logger.warn(`Job ${id} was left running by a worker that stopped: ended as error (or retried)`);
    }
    return lost.map((l) => l.id);
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

  async stop(): Promise<void> {}
}
