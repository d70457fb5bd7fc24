import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { Logger } from '../common/logger.js';
import { JobLogCollector } from './job-log.js';
import type { QueueJob } from './job-record.js';
import type { JobRepository } from './job-repository.js';
import { jobRunArgs, jobRunEnv, writeJobFile, type JobRunFiles } from './job-run-contract.js';

/** log lines reach the store at least this often while a job runs */
const LOG_FLUSH_MS = 250;
/** how long a job's `gex run` waits for its configuration's run lock */
const RUN_LOCK_WAIT_SECONDS = 30;

/** A job's `gex run` process: no stdin, its output piped. */
export type JobRunProcess = ChildProcessByStdio<null, Readable, Readable>;

/** How a worker starts a job's `gex run`. */
export interface JobLaunch {
  /** how to start gex: [node, script] */
  command: readonly string[];
  /** the store the run opens (in its environment, never on its command line) */
  store: string;
  env?: NodeJS.ProcessEnv;
}

/** Writes the job's file: its identity goes in a file, never on the command line (see job-run-contract.ts). */
export function writeJobSpec(files: JobRunFiles, job: QueueJob): Promise<void> {
  return writeJobFile(files.jobFile, {
    componentId: job.componentId,
    configId: job.configId,
    project: job.projectName,
    rowIds: job.configRowIds,
    force: job.mode === 'forceRun',
  });
}

/** Spawns the job's `gex run` (its output piped: collectJobLog reads it). */
export function spawnJobRun(launch: JobLaunch, files: JobRunFiles): JobRunProcess {
  const args = [...launch.command.slice(1), ...jobRunArgs(files, RUN_LOCK_WAIT_SECONDS)];
  const env = jobRunEnv(launch.env ?? process.env, launch.store, process.pid);
  return spawn(launch.command[0], args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * The run's output kept as the job's log: stdout and stderr lines, stored every 250 ms while it
 * runs; `end` stores the rest (and stops the timer). A failed store only costs those lines (warned).
 */
export function collectJobLog(
  child: JobRunProcess,
  job: QueueJob,
  jobs: JobRepository,
  logger: Logger,
): { end(): Promise<void> } {
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
  child.on('error', (error) => log.write('stderr', `Cannot start gex run: ${error.message}\n`));
  const flusher = setInterval(() => void flush(), LOG_FLUSH_MS);
  return {
    end: () => {
      clearInterval(flusher);
      return flush(true);
    },
  };
}
