import type { Argv } from 'yargs';
import { errorLogFields, exitCodeOf, UserError } from '../../common/errors.js';
import type { JobPlatform } from '../../jobs/job-platform.js';
import type { EmbeddedBackend } from '../../store/embedded/embedded-backend.js';
import { displayLocation, isPostgresStore } from '../../store/store-location.js';
import { builtinComponents } from '../builtin-components.js';
import { jobWorkerOptions, workerSettings, type JobWorkerArgs } from '../options/job-worker-options.js';
import { notificationOptions, notificationSettings, type NotificationArgs } from '../options/notification-options.js';
import { integerOption } from '../options/option-checks.js';
import { createCliLogging, type LoggingArgs } from '../process/logging.js';
import { untilStopSignal } from '../process/stop-signals.js';

interface WorkerArgs extends LoggingArgs, JobWorkerArgs, NotificationArgs {
  store?: string;
  concurrency: number;
}

/** `gex worker`: runs the queue jobs of a PostgreSQL store, beside any number of other workers and servers. */
export function workerCommand(yargs: Argv): Argv {
  return yargs.command<WorkerArgs>(
    'worker',
    'Run queue jobs of a PostgreSQL store; start as many workers on as many machines as you like (docs/jobs.md)',
    (y) =>
      notificationOptions(jobWorkerOptions(y))
        .option('store', {
          type: 'string',
          defaultDescription: '$GEX_STORE',
          describe: 'the store: a postgres:// URL (the database every server and worker shares)',
        })
        .option(
          'concurrency',
          integerOption('concurrency', { min: 1, max: 256, default: 1, describe: 'jobs this worker runs at once' }),
        )
        .example(
          '$0 worker --store postgres://gex@db/gex --concurrency 4',
          'run up to 4 jobs at once',
        ) as Argv<WorkerArgs>,
    async (args) => {
      process.exitCode = await runWorker(args);
    },
  );
}

/** Runs jobs until SIGINT/SIGTERM; then stops its jobs' processes (their jobs end as error, or are retried). */
export async function runWorker(args: WorkerArgs): Promise<number> {
  const { logger } = createCliLogging(args);
  let backend: EmbeddedBackend | undefined;
  let platform: JobPlatform | undefined;
  try {
    const store = args.store ?? process.env.GEX_STORE ?? '';
    if (!isPostgresStore(store))
      throw new UserError(
        'GEX_CLI_USAGE',
        store === ''
          ? 'gex worker needs the store: --store postgres://… (or $GEX_STORE)'
          : 'gex worker runs the jobs of a PostgreSQL store (--store postgres://…); the jobs of a SQLite store are run by its one server: gex serve --workers N',
      );
    const [{ openEmbeddedStore }, { JobPlatform }] = await Promise.all([
      import('../../store/open-store.js'),
      import('../../jobs/job-platform.js'),
    ]);
    const notifications = notificationSettings(args, process.env);
    backend = await openEmbeddedStore(store, process.env, { builtinComponents: builtinComponents() });
    platform = await JobPlatform.open(backend, {
      logger,
      retryLimit: args.retries,
      workers: workerSettings(args, args.concurrency, store),
      notifications,
    });
    await platform.start();
    logger.info(
      `Worker ready: up to ${args.concurrency} ${args.concurrency === 1 ? 'job' : 'jobs'} at once from ${displayLocation(store)}`,
    );
    const signal = await untilStopSignal();
    logger.info(`${signal} received: stopping (running jobs are stopped and end as error, or are retried)`);
    return 0;
  } catch (error) {
    if (error instanceof UserError) logger.error(errorLogFields(error), error.message);
    else logger.error({ err: error, ...errorLogFields(error) }, `Application error: ${(error as Error).message}`);
    return exitCodeOf(error);
  } finally {
    await platform?.stop();
    await backend?.close();
  }
}
