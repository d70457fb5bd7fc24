import type { Argv } from 'yargs';
import type { Logger } from '../../common/logger.js';
import type { JobQueue } from '../../jobs/job-queue.js';
import type { WorkerSettings } from '../../jobs/job-platform.js';
import { DEFAULT_JOB_RETENTION_DAYS, DEFAULT_JOB_TIMEOUT_SECONDS } from '../../jobs/worker-pool.js';
import { noWorkerAdvice } from '../../jobs/worker-registry.js';
import { integerOption } from './option-checks.js';

/** The options of whatever runs queue jobs: `gex serve` and `gex worker`. */
export interface JobWorkerArgs {
  'job-timeout': number;
  retries: number;
  'job-retention-days': number;
}

export function jobWorkerOptions<T>(y: Argv<T>): Argv<T & JobWorkerArgs> {
  return y
    .option(
      'job-timeout',
      integerOption('job-timeout', {
        min: 1,
        max: 30 * 86_400,
        default: DEFAULT_JOB_TIMEOUT_SECONDS,
        unit: 'seconds',
        describe:
          "seconds a queue job may run before it is stopped (ends as error); a configuration's runtime.process_timeout may lower it",
      }),
    )
    .option(
      'retries',
      integerOption('retries', {
        min: 0,
        max: 10,
        default: 0,
        describe:
          'retries of a job after an application error or a lost worker, for jobs created here (never after a user error; 0 = none, as in Keboola)',
      }),
    )
    .option(
      'job-retention-days',
      integerOption('job-retention-days', {
        min: 1,
        max: 3650,
        default: DEFAULT_JOB_RETENTION_DAYS,
        unit: 'days',
        describe: 'finished jobs and their logs are deleted this many days after they ended',
      }),
    ) as Argv<T & JobWorkerArgs>;
}

/** The worker pool's settings from the options: `count` jobs at once, each a process of this same gex. */
export function workerSettings(args: JobWorkerArgs, count: number, store: string): WorkerSettings {
  return {
    count,
    jobTimeoutSeconds: args['job-timeout'],
    retentionDays: args['job-retention-days'],
    store,
    // this same gex: node and its script
    command: [process.execPath, process.argv[1]],
  };
}

/**
 * Said when a server that runs no jobs (`--workers 0`) starts: whether anything else runs the
 * store's jobs — else jobs queued through it wait for good, and nothing would say why.
 */
export async function sayWhoRunsJobs(queue: JobQueue, logger: Logger): Promise<void> {
  try {
    const capacity = await queue.registry.capacity();
    if (capacity > 0)
      logger.info(
        `This server runs no jobs (--workers 0); the other servers and workers of the store run ${capacity} at once`,
      );
    else
      logger.warn(`This server runs no jobs (--workers 0), and ${noWorkerAdvice(queue.scope)}; until then jobs wait`);
  } catch (error) {
    logger.warn(`Cannot tell who runs the store's jobs: ${(error as Error).message}`);
  }
}
