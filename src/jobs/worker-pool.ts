import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import type { Logger } from '../common/logger.js';
import { displayId } from '../common/log-text.js';
import { PARENT_PID_VARIABLE } from '../cli/parent-watch.js';
import { JobLogCollector } from './job-log.js';
import type { QueueJob } from './job-record.js';
import type { JobRepository } from './job-repository.js';
import { resultOfRun, resultWithMessage } from './job-result.js';

export const DEFAULT_JOB_TIMEOUT_SECONDS = 3600;
/** the fallback check for jobs created or killed through another server (the hooks wake the pool at once) */
const POLL_MS = 1000;
/** log lines reach the store at least this often while a job runs */
const LOG_FLUSH_MS = 250;
/** a process that ignores SIGTERM this long is killed */
const KILL_GRACE_MS = 30_000;
/** a summary file larger than this is not read (the job's result then says only the exit code) */
const MAX_SUMMARY_BYTES = 16 * 1024 * 1024;
export const WORKER_STOPPED = 'The job ended with an error: the worker stopped while it ran (its process is gone).';

export interface WorkerPoolOptions {
  jobs: JobRepository;
  /** jobs run at once */
  workers: number;
  jobTimeoutSeconds: number;
  /** the store the children run against (passed in their environment, never on a command line) */
  store: string;
  /** how to start gex: [node, script] */
  command: readonly string[];
  logger: Logger;
  env?: NodeJS.ProcessEnv;
}

interface Running {
  job: QueueJob;
  child: ChildProcess;
  killed: boolean;
  timedOut: boolean;
}

/** This process as a worker: host and pid (a job's `worker`; lost when that process is gone). */
export function workerName(): string {
  return `${hostname()}:${process.pid}`;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The embedded worker pool of `gex serve --workers N`: claims jobs from the store and runs each as
 * its own `gex run` process (crash and memory isolation), its output kept as the job's log and its
 * summary as the job's result. Woken when a job is created or killed; polls as a fallback.
 */
export class WorkerPool {
  private readonly running = new Map<number, Running>();
  private readonly name = workerName();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private again = false;
  private stopping = false;
  private readonly finished = new Set<Promise<void>>();

  constructor(private readonly options: WorkerPoolOptions) {}

  /** Ends the jobs a dead worker of this host left running, then starts claiming. */
  async start(): Promise<void> {
    await this.recoverLost();
    this.timer = setInterval(() => this.poll(), POLL_MS);
    this.timer.unref();
    this.wake();
  }

  /** Jobs left running by a process of this host that is gone: ended as `error`, the next job of their configuration may run. */
  async recoverLost(): Promise<number[]> {
    const host = hostname();
    const lost = (await this.options.jobs.running()).filter(({ worker }) => {
      const [workerHost, pid] = (worker ?? '').split(/:(?=\d+$)/);
      return worker === null || (workerHost === host && Number(pid) !== process.pid && !isAlive(Number(pid)));
    });
    for (const { id } of lost) {
      await this.options.jobs.finish(id, () => ({
        status: 'error',
        result: resultWithMessage(WORKER_STOPPED, 'application'),
      }));
      this.options.logger.warn(`Job ${id} was left running by a worker that stopped: ended as error`);
    }
    return lost.map((l) => l.id);
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
    this.stopping = true;
    clearInterval(this.timer);
    for (const run of this.running.values()) this.terminate(run);
    await Promise.all([...this.finished]);
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
      const job = await this.options.jobs.claimNext(this.name);
      if (!job) return;
      await this.launch(job);
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

  private async launch(job: QueueJob): Promise<void> {
    const { jobs, logger } = this.options;
    const dir = await mkdtemp(path.join(tmpdir(), `gex-job-${job.id}-`));
    const summaryFile = path.join(dir, 'summary.json');
    const args = [
      ...this.options.command.slice(1),
      'run',
      '--config-id',
      job.configId,
      '--component-id',
      job.componentId,
      '--project',
      job.projectName,
      ...job.configRowIds.flatMap((id) => ['--row-id', id]),
      ...(job.mode === 'forceRun' ? ['--force'] : []),
      '--data-dir',
      path.join(dir, 'data'),
      '--summary',
      summaryFile,
    ];
    // the job's own identity, not the server's: no Keboola variable of the server reaches the run
    const env = Object.fromEntries(
      Object.entries(this.options.env ?? process.env).filter(([k]) => !k.startsWith('KBC_')),
    );
    env.GEX_STORE = this.options.store;
    env[PARENT_PID_VARIABLE] = String(process.pid);
    const child = spawn(this.options.command[0], args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const run: Running = { job, child, killed: false, timedOut: false };
    this.running.set(job.id, run);
    logger.info(
      `Job ${job.id} started: configuration ${displayId(job.configId)} of ${displayId(job.componentId)} (project ${job.projectId})`,
    );

    const log = new JobLogCollector();
    let writes = Promise.resolve();
    const flush = (end = false) => {
      const events = log.take(end);
      writes = writes
        .then(() => jobs.appendEvents(job, events))
        .catch((error: unknown) => logger.warn(`Job ${job.id}: log lines not stored: ${(error as Error).message}`));
      return writes;
    };
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => log.write('stdout', chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => log.write('stderr', chunk));
    const flusher = setInterval(() => void flush(), LOG_FLUSH_MS);
    const timeout = setTimeout(() => {
      run.timedOut = true;
      this.terminate(run);
    }, this.options.jobTimeoutSeconds * 1000);

    const done = new Promise<void>((resolve) => {
      child.on('error', (error) => log.write('stderr', `Cannot start gex run: ${error.message}\n`));
      child.on('close', (code) => {
        clearInterval(flusher);
        clearTimeout(timeout);
        void (async () => {
          try {
            await flush(true);
            const summary = await readSummary(summaryFile);
            const ended = await jobs.finish(job.id, (current) => {
              if (current === 'terminating' || run.killed) {
                return {
                  status: 'terminated',
                  result: resultWithMessage('The job was killed: its process was stopped (no state saved).'),
                };
              }
              if (run.timedOut) {
                const message = `The job timed out after ${this.options.jobTimeoutSeconds} seconds: its process was stopped (no state saved).`;
                return { status: 'error', result: resultWithMessage(message, 'user') };
              }
              if (this.stopping) return { status: 'error', result: resultWithMessage(WORKER_STOPPED, 'application') };
              return resultOfRun(summary, code);
            });
            logger.info(`Job ${job.id} ended (exit ${code ?? 'signal'})${ended ? '' : ': it was no longer running'}`);
          } catch (error) {
            logger.error({ err: error }, `Job ${job.id}: cannot record its end: ${(error as Error).message}`);
          } finally {
            this.running.delete(job.id);
            await rm(dir, { recursive: true, force: true }).catch(() => undefined);
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

async function readSummary(file: string): Promise<unknown> {
  try {
    if ((await stat(file)).size > MAX_SUMMARY_BYTES) return undefined;
    return JSON.parse(await readFile(file, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}
