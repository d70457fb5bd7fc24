import PQueue from 'p-queue';
import { UserError } from '../../common/errors.js';
import { maskUrlSignatures } from '../../common/url-signature.js';
import type { Logger } from '../../common/logger.js';
import { storedIdentityLiveness, thisProcessText } from '../../common/process-liveness.js';
import { StoreError } from '../../store/store-error.js';
import { StorageJobs, type StorageJobLiveness, type StorageJobStatus } from '../../store/tables/index.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/**
 * Storage jobs that run after their request has been answered (imports and exports through File
 * Storage, docs/storage-api.md#jobs): recorded `waiting` before the 202, `processing` when the work
 * starts, `success` or `error` when it ends — in the database, so any server process on the store
 * answers the poll. At most `concurrency` jobs of this process run at once; the others wait in
 * order. Each job's work is one transaction: a process killed meanwhile changes nothing, and the
 * next server started on the store ends the job `error` (`endOrphans`).
 */

export interface StorageJobMetrics {
  inBytes: number;
  outBytes: number;
}

export interface StorageJobWire {
  id: number;
  status: StorageJobStatus;
  url: string;
  tableId: string | null;
  operationName: string;
  operationParams: Record<string, unknown>;
  createdTime: string;
  startTime: string | null;
  endTime: string | null;
  runId: null;
  results: Record<string, unknown> | null;
  creatorToken: { id: string; description: string };
  metrics: { inCompressed: false; inBytes: number; outCompressed: false; outBytes: number };
  error: { code: string; message: string } | null;
}

export interface StorageJobOutcome {
  results: Record<string, unknown>;
  metrics?: Partial<StorageJobMetrics>;
}

/** Jobs of one process that run at once by default: each holds a database connection and a temporary file. */
export const DEFAULT_STORAGE_JOB_CONCURRENCY = 2;

/** This process as a job's worker (see ProcessIdentity: a reused pid is another process). */
export function thisWorker(): string {
  return thisProcessText();
}

/** Whether the process a job names as its worker is gone (only knowable on this host). */
export function workerGone(worker: string): boolean {
  return storedIdentityLiveness(worker) === 'dead';
}

/**
 * What a failed job's `error` says: a refusal's code and message (the server gives its work's
 * refusals Keboola's codes), a user error's message; gex's own faults only in the server's log.
 */
function jobError(error: unknown): { code: string; message: string } {
  // a message naming a pre-signed address never carries its signature into the job's answer
  if (error instanceof StoreError)
    return { code: error.code || KEBOOLA_ERRORS.jobsError.code, message: maskUrlSignatures(error.message) };
  if (error instanceof UserError)
    return { code: KEBOOLA_ERRORS.tablesValidation.code, message: maskUrlSignatures(error.message) };
  return {
    code: KEBOOLA_ERRORS.jobsInternal.code,
    message: 'Application error: the job failed; the server log says why.',
  };
}

export class StorageJobRunner {
  private readonly queue: PQueue;
  private readonly worker = thisWorker();
  /** jobs queued and not started yet: ended `error` if the server stops first */
  private readonly waiting = new Map<number, { jobs: StorageJobs; state: StorageJobWire }>();

  private readonly liveness: StorageJobLiveness | undefined;

  constructor(
    options: { concurrency?: number; logger?: Logger; liveness?: StorageJobLiveness } = {},
    private readonly logger = options.logger,
  ) {
    this.queue = new PQueue({ concurrency: options.concurrency ?? DEFAULT_STORAGE_JOB_CONCURRENCY });
    this.liveness = options.liveness;
  }

  /** Lets go of a job's liveness lock once its end is recorded (a failure only costs a lock until exit). */
  private async release(id: number): Promise<void> {
    await this.liveness
      ?.release(id)
      .catch((error: unknown) => this.logger?.warn({ err: error }, `Storage job ${id}: lock not released`));
  }

  /**
   * Records `job` waiting and queues `work`; returns the job as the 202 answers it. A failure of
   * `work` ends the job `error` with its message.
   */
  async submit(
    jobs: StorageJobs,
    job: Omit<StorageJobWire, 'status' | 'startTime' | 'endTime' | 'results' | 'error' | 'metrics' | 'runId'>,
    work: () => Promise<StorageJobOutcome>,
  ): Promise<StorageJobWire> {
    const state: StorageJobWire = {
      ...job,
      status: 'waiting',
      startTime: null,
      endTime: null,
      runId: null,
      results: null,
      metrics: { inCompressed: false, inBytes: 0, outCompressed: false, outBytes: 0 },
      error: null,
    };
    // held from before the job is recorded until after its end is: a server on another machine that
    // can take it knows this one is gone
    if (this.liveness && !(await this.liveness.hold(state.id)))
      this.logger?.warn(`Storage job ${state.id}: its liveness lock is held by another session`);
    try {
      await jobs.record(state.id, JSON.stringify(state), 'waiting', this.worker);
    } catch (error) {
      await this.release(state.id);
      throw error;
    }
    const answered = { ...state };
    this.waiting.set(state.id, { jobs, state });
    void this.queue.add(() => {
      this.waiting.delete(state.id);
      return this.run(jobs, state, work);
    });
    return answered;
  }

  private async run(jobs: StorageJobs, state: StorageJobWire, work: () => Promise<StorageJobOutcome>): Promise<void> {
    try {
      state.status = 'processing';
      state.startTime = new Date().toISOString();
      await jobs.update(state.id, 'processing', JSON.stringify(state));
      try {
        const outcome = await work();
        state.status = 'success';
        state.results = outcome.results;
        state.metrics = { ...state.metrics, ...outcome.metrics };
      } catch (error) {
        state.status = 'error';
        state.error = jobError(error);
        if (state.error.code === KEBOOLA_ERRORS.jobsInternal.code)
          this.logger?.error({ err: error }, `Storage job ${state.id} (${state.operationName}) failed`);
      }
      state.endTime = new Date().toISOString();
      await jobs.update(state.id, state.status, JSON.stringify(state));
    } catch (error) {
      // the database is gone: the job stays as last recorded, and is ended by the next server start
      this.logger?.error({ err: error }, `Storage job ${state.id} could not be recorded`);
    } finally {
      await this.release(state.id);
    }
  }

  /**
   * A graceful stop: jobs not started yet end `error` (nothing was changed), running ones are
   * waited for.
   */
  async close(): Promise<void> {
    this.queue.clear();
    for (const { jobs, state } of this.waiting.values()) {
      state.status = 'error';
      state.endTime = new Date().toISOString();
      state.error = {
        code: KEBOOLA_ERRORS.jobsStopped.code,
        message: 'The server stopped before the job started; nothing was changed. Run the job again.',
      };
      await jobs.update(state.id, 'error', JSON.stringify(state)).catch(() => undefined);
      await this.release(state.id);
    }
    this.waiting.clear();
    await this.queue.onIdle();
  }
}
