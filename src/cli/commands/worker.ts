import type { Argv } from 'yargs';
import { errorLogFields, exitCodeOf, UserError } from '../../common/errors.js';
import type { JobPlatform } from '../../jobs/job-platform.js';
import type { EmbeddedBackend } from '../../store/embedded/embedded-backend.js';
import { displayLocation, isPostgresStore } from '../../store/store-location.js';
import { builtinComponents } from '../builtin-components.js';
import { jobWorkerOptions, workerSettings, type JobWorkerArgs } from '../options/job-worker-options.js';
import { notificationOptions, notificationSettings, type NotificationArgs } from '../options/notification-options.js';
import { integerOption } from '../options/option-checks.js';
import { fileStorageOption, fileStorageSettings, openFileStorage } from '../options/file-storage-option.js';
import type { ObjectStore } from '../../store/files/object-store.js';
import { listenAddressOption, type ListenAddress } from '../options/listen-address.js';
import { displayText } from '../../common/log-text.js';
import { createCliLogging, type LoggingArgs } from '../process/logging.js';
import { untilStopSignal } from '../process/stop-signals.js';

interface WorkerArgs extends LoggingArgs, JobWorkerArgs, NotificationArgs {
  store?: string;
  concurrency: number;
  'file-storage'?: string;
  'metrics-listen'?: ListenAddress;
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
        .option('file-storage', fileStorageOption())
        .option(
          'metrics-listen',
          listenAddressOption(
            'metrics-listen',
            'serve Prometheus metrics (job metrics and process metrics) at GET /metrics on HOST:PORT, without a token (default: none)',
          ),
        )
        .example('$0 worker --store postgres://gex@db/gex --concurrency 4', 'run up to 4 jobs at once')
        .example(
          '$0 worker --store postgres://gex@db/gex --metrics-listen 0.0.0.0:9464',
          'also serve http://<this machine>:9464/metrics',
        ) as Argv<WorkerArgs>,
    async (args) => {
      process.exitCode = await runWorker(args);
    },
  );
}

async function loadMetrics() {
  const [{ newRegistry, collectProcessMetrics }, { startMetricsListener }] = await Promise.all([
    import('../../server/operations/metrics.js'),
    import('../../server/operations/metrics-listener.js'),
  ]);
  return { newRegistry, collectProcessMetrics, startMetricsListener };
}

/** Why --metrics-listen could not listen, and what to choose instead. */
function metricsListenError(error: unknown, listen: ListenAddress): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${displayText(listen.host)}:${listen.port}`;
  const fix: Record<string, string> = {
    EADDRINUSE: `port ${listen.port} on ${displayText(listen.host)} is already in use: choose another port`,
    EACCES: `not allowed to listen on ${where}: choose a port above 1023`,
    EADDRNOTAVAIL: `${displayText(listen.host)} is no address of this machine: choose another host, e.g. 127.0.0.1 or 0.0.0.0`,
    ENOTFOUND: `${displayText(listen.host)} is no address of this machine (its name does not resolve): choose another host, e.g. 127.0.0.1 or 0.0.0.0`,
    EAI_AGAIN: `${displayText(listen.host)} could not be resolved: choose an IP address, e.g. 127.0.0.1 or 0.0.0.0`,
  };
  const message = code ? fix[code] : undefined;
  return message ? new UserError('GEX_SERVER_LISTEN_FAILED', `--metrics-listen ${where}: ${message}`) : error;
}

/** Runs jobs until SIGINT/SIGTERM; then stops its jobs' processes (their jobs end as error, or are retried). */
export async function runWorker(args: WorkerArgs): Promise<number> {
  const { logger } = createCliLogging(args);
  let backend: EmbeddedBackend | undefined;
  let platform: JobPlatform | undefined;
  let listener: { url: string; close(): Promise<void> } | undefined;
  let objects: ObjectStore | undefined;
  try {
    const store = args.store ?? process.env.GEX_STORE ?? '';
    if (!isPostgresStore(store))
      throw new UserError(
        'GEX_CLI_USAGE',
        store === ''
          ? 'gex worker needs the store: --store postgres://… (or $GEX_STORE)'
          : 'gex worker runs the jobs of a PostgreSQL store (--store postgres://…); the jobs of a SQLite store are run by its one server: gex serve --workers N',
      );
    const [{ openEmbeddedStore }, { JobPlatform }, metricsModules] = await Promise.all([
      import('../../store/open-store.js'),
      import('../../jobs/job-platform.js'),
      args['metrics-listen'] ? loadMetrics() : undefined,
    ]);
    const registry = metricsModules?.newRegistry();
    const notifications = notificationSettings(args, process.env);
    const fileStorage = fileStorageSettings(args['file-storage'], process.env);
    backend = await openEmbeddedStore(store, process.env, { builtinComponents: builtinComponents() });
    if (fileStorage !== undefined) objects = await openFileStorage(backend, fileStorage);
    platform = await JobPlatform.open(backend, {
      logger,
      retryLimit: args.retries,
      workers: workerSettings(args, args.concurrency, store),
      notifications,
      metrics: registry,
    });
    const listen = args['metrics-listen'];
    if (metricsModules && registry && listen) {
      metricsModules.collectProcessMetrics(registry);
      listener = await metricsModules.startMetricsListener(registry, listen.host, listen.port).catch((e: unknown) => {
        throw metricsListenError(e, listen);
      });
      logger.info(`Metrics listening on ${listener.url}/metrics`);
    }
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
    await listener?.close();
    await platform?.stop();
    await backend?.close();
    objects?.close();
  }
}
