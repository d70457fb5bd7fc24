import type { Logger } from '../common/logger.js';
import { displayId } from '../common/log-text.js';
import { makeJobFolder, removeJobFolder } from './job-folder.js';
import { collectJobLog, spawnJobRun, writeJobSpec, type JobRunProcess } from './job-process.js';
import type { QueueJob } from './job-record.js';
import type { JobRepository } from './job-repository.js';
import { resultWithMessage, runOutcome } from './job-result.js';
import { jobRunFiles, readRunSummary, type JobRunFiles } from './job-run-contract.js';
import { sweepJobFolders, workerName, type ClaimedJob, type JobSource } from './job-source.js';
import type { WorkerRegistry } from './worker-registry.js';

export const DEFAULT_JOB_TIMEOUT_SECONDS = 3600;
export const DEFAULT_JOB_RETENTION_DAYS = 30;
/** the fallback check for jobs created or killed through another server (the hooks wake the pool at once) */
const POLL_MS = 1000;
/** how often finished jobs past their retention are deleted */
const RETENTION_CHECK_MS = 3600_000;
/** a process that ignores SIGTERM this long is killed */
const KILL_GRACE_MS = 30_000;

export interface WorkerPoolOptions {
  jobs: JobRepository;
  /** where jobs come from: the store itself (SQLite) or pg-boss (PostgreSQL) */
  source: JobSource;
  /** jobs run at once */
  workers: number;
  jobTimeoutSeconds: number;
  /** finished jobs older than this many days are deleted */
  retentionDays?: number;
  /** the store the children run against (passed in their environment, never on a command line) */
  store: string;
  /** how to start gex: [node, script] */
  command: readonly string[];
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  /** where the pool registers itself while it runs (who runs the store's jobs) */
  registry?: WorkerRegistry;
}

interface Running {
  job: QueueJob;
  child: JobRunProcess;
  killed: boolean;
  timedOut: boolean;
  /** stopped because this worker can no longer guard it (its locks' session broke) */
  abandoned: boolean;
}

/**
 * The worker pool of `gex serve --workers N` and `gex worker --concurrency N`: claims jobs from its
 * source and runs each as its own `gex run` process (crash and memory isolation), its output kept
 * as the job's log and its summary as the job's result. Woken when a job is created or dispatched;
 * polls as a fallback, and for kill requests sent to other servers.
 */
export class WorkerPool {
  private readonly running = new Map<number, Running>();
  private readonly name = workerName();
  private timer: NodeJS.Timeout | undefined;
  private retention: NodeJS.Timeout | undefined;
  private ticking = false;
  private again = false;
  private stopping = false;
  private readonly finished = new Set<Promise<void>>();

  constructor(private readonly options: WorkerPoolOptions) {}

  /** Jobs running in this pool now, and its free slots (the job metrics). */
  slots(): { busy: number; idle: number } {
    const busy = this.running.size;
    return { busy, idle: this.stopping ? 0 : Math.max(0, this.options.workers - busy) };
  }

  /** Ends the jobs dead workers left running (the source knows how to tell), then starts claiming. */
  async start(): Promise<void> {
    await this.options.registry?.register(this.options.workers);
    await this.options.source.start(() => this.wake());
    // what workers of this host that died left in their job folders (their jobs may have ended elsewhere)
    await sweepJobFolders(this.options.logger);
    this.timer = setInterval(() => this.poll(), POLL_MS);
    this.timer.unref();
    void this.deleteExpired();
    this.retention = setInterval(() => void this.deleteExpired(), RETENTION_CHECK_MS);
    this.retention.unref();
    this.wake();
  }

  /** Finished jobs past the retention, deleted (every server and worker does it; deleting twice is harmless). */
  private async deleteExpired(): Promise<void> {
    const days = this.options.retentionDays ?? DEFAULT_JOB_RETENTION_DAYS;
    const before = new Date(Date.now() - days * 86_400_000);
    try {
      let deleted = 0;
      for (let n; (n = await this.options.jobs.deleteFinishedBefore(before)) > 0 && !this.stopping;) deleted += n;
      if (deleted) this.options.logger.info(`Deleted ${deleted} jobs that ended more than ${days} days ago`);
    } catch (error) {
      this.options.logger.warn(`Job retention: ${(error as Error).message}`);
    }
  }

  /** Every running job's process stopped: their jobs end as error (the worker stopped), or are retried. */
  abandonAll(): void {
    for (const run of this.running.values()) {
      run.abandoned = true;
      this.terminate(run);
    }
  }

  /** Look for work now (a job was created or finished). */
  wake(): void {
    if (this.stopping || this.options.workers <= 0) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    void this.fill()
      .catch((error: unknown) => this.options.logger.error({ err: error }, `Job worker: ${(error as Error).message}`))
      .finally(() => {
        this.ticking = false;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** A kill request: stops the job's process if it runs here. */
  kill(jobId: number): void {
    const run = this.running.get(jobId);
    if (!run || run.killed) return;
    run.killed = true;
    this.terminate(run);
  }

  /** Stops claiming; stops the running processes (their jobs end as error: the worker stopped). */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearInterval(this.timer);
    clearInterval(this.retention);
    for (const run of this.running.values()) this.terminate(run);
    await Promise.all([...this.finished]);
    await this.options.source.stop();
    await this.options.registry
      ?.unregister()
      .catch((error: unknown) => this.options.logger.warn(`Job worker: not deregistered: ${(error as Error).message}`));
  }

  private poll(): void {
    this.wake();
    if (this.running.size === 0) return;
    // a kill sent to another server reaches this worker through the store
    void this.options.jobs
      .statuses([...this.running.keys()])
      .then((statuses) => {
        for (const [id, status] of statuses) if (status === 'terminating') this.kill(id);
      })
      .catch(() => undefined);
  }

  private async fill(): Promise<void> {
    while (!this.stopping && this.running.size < this.options.workers) {
      const claimed = await this.options.source.claim(this.options.workers - this.running.size, this.name);
      if (claimed.length === 0) return;
      for (const one of claimed) await this.launch(one);
    }
  }

  private terminate(run: Running): void {
    if (run.child.exitCode !== null || run.child.signalCode !== null) return;
    run.child.kill('SIGTERM');
    setTimeout(
      () => run.child.exitCode === null && run.child.signalCode === null && run.child.kill('SIGKILL'),
      KILL_GRACE_MS,
    ).unref();
  }

  /** The job's folder and job file; undefined (the job ended error) when they cannot be made. */
  private async prepare(
    job: QueueJob,
    release: () => Promise<void>,
  ): Promise<{ dir: string; files: JobRunFiles } | undefined> {
    let dir: string | undefined;
    try {
      dir = await makeJobFolder(job.id);
      const files = jobRunFiles(dir);
      await writeJobSpec(files, job);
      return { dir, files };
    } catch (error) {
      // claimed but not startable (a full or read-only temp folder): ended, not left processing
      if (dir) await removeJobFolder(dir).catch(() => undefined);
      const message = `The job could not start: its folder could not be made (${(error as Error).message}).`;
      await this.options.jobs.finish(job.id, () => ({
        status: 'error',
        result: resultWithMessage(message, 'application'),
      }));
      await release();
      this.options.logger.error(`Job ${job.id}: ${message}`);
      return undefined;
    }
  }

  /** Runs a claimed job: its process spawned, its log collected, its end recorded by the outcome rules. */
  private async launch({ job, release }: ClaimedJob): Promise<void> {
    const { jobs, logger } = this.options;
    const timeoutSeconds = Math.min(this.options.jobTimeoutSeconds, job.timeoutSeconds ?? Infinity);
    const prepared = await this.prepare(job, release);
    if (!prepared) return;
    const { dir, files } = prepared;
    const child = spawnJobRun(this.options, files);
    const run: Running = { job, child, killed: false, timedOut: false, abandoned: false };
    this.running.set(job.id, run);
    logger.info(
      `Job ${job.id} started: configuration ${displayId(job.configId)} of ${displayId(job.componentId)} (project ${job.projectId})`,
    );
    const log = collectJobLog(child, job, jobs, logger);
    const timeout = setTimeout(() => {
      run.timedOut = true;
      this.terminate(run);
    }, timeoutSeconds * 1000);

    const done = new Promise<void>((resolve) => {
      child.on('close', (code) => {
        clearTimeout(timeout);
        void (async () => {
          try {
            await log.end();
            const summary = await readRunSummary(files.summaryFile);
            const ended = await jobs.finish(job.id, (current) =>
              runOutcome(current, {
                killed: run.killed,
                timedOut: run.timedOut,
                timeoutSeconds,
                workerStopped: this.stopping || run.abandoned,
                summary,
                exitCode: code,
              }),
            );
            logger.info(`Job ${job.id} ended (exit ${code ?? 'signal'})${ended ? '' : ': it was no longer running'}`);
          } catch (error) {
            logger.error({ err: error }, `Job ${job.id}: cannot record its end: ${(error as Error).message}`);
          } finally {
            await release().catch((error: unknown) =>
              logger.warn(`Job ${job.id}: cannot give up its lock: ${(error as Error).message}`),
            );
            this.running.delete(job.id);
            await removeJobFolder(dir).catch(() => undefined);
            resolve();
            this.wake();
          }
        })();
      });
    });
    this.finished.add(done);
    void done.then(() => this.finished.delete(done));
  }
}
