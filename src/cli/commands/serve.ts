import type { Argv } from 'yargs';
import { errorLogFields, exitCodeOf, UserError } from '../../common/errors.js';
import { displayText } from '../../common/log-text.js';
import {
  DEFAULT_BODY_LIMIT,
  DEFAULT_FILE_LIMIT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_UPLOAD_MEMORY,
} from '../../server/http/limits.js';

/** The largest --body-limit: a request body is held in memory whole. */
const MAX_BODY_LIMIT = 1024 * 1024 * 1024;
/** The largest --max-file-size: 5 TiB, Keboola's largest object in cloud storage. */
const MAX_FILE_LIMIT = 5 * 1024 ** 4;
/** The smallest --max-upload-memory: one upload of a large file holds two 1 MiB chunks. */
const MIN_UPLOAD_MEMORY = 2 * 1024 * 1024;
import type { EmbeddedBackend } from '../../store/embedded/embedded-backend.js';
import {
  DURABILITY_LEVELS,
  DURABILITY_VARIABLE,
  durabilityFromEnv,
  parseDurability,
} from '../../store/sql/sqlite-settings.js';
import { DEFAULT_STORE_FILE, isRemoteStore } from '../../store/store-location.js';
import { builtinComponents } from '../builtin-components.js';
import { createCliLogging, type LoggingArgs } from '../process/logging.js';
import { untilStopSignal } from '../process/stop-signals.js';
import type { JobPlatform } from '../../jobs/job-platform.js';
import { jobWorkerOptions, sayWhoRunsJobs, workerSettings, type JobWorkerArgs } from '../options/job-worker-options.js';
import { notificationOptions, notificationSettings, type NotificationArgs } from '../options/notification-options.js';
import { integerOption } from '../options/option-checks.js';
import { fileStorageOption, fileStorageSettings, openFileStorage } from '../options/file-storage-option.js';
import type { ObjectStore } from '../../store/files/object-store.js';
import { OBJECT_UPLOAD_MEMORY } from '../../store/files/file-bytes.js';

interface ServeArgs extends LoggingArgs, JobWorkerArgs, NotificationArgs {
  port: number;
  host: string;
  store: string;
  'body-limit': number;
  'max-file-size': number;
  'max-upload-memory': number;
  'request-timeout': number;
  durability?: string;
  'file-storage'?: string;
  metrics: boolean;
  workers: number;
}

export function serveCommand(yargs: Argv): Argv {
  return yargs.command<ServeArgs>(
    'serve',
    'Serve the configuration store over HTTP, compatible with Keboola Storage API v2 (component configurations)',
    (y) =>
      notificationOptions(jobWorkerOptions(y))
        .option(
          'port',
          integerOption('port', {
            min: 0,
            max: 65535,
            default: 8080,
            describe: 'TCP port to listen on (0 = any free port)',
          }),
        )
        .option('host', {
          type: 'string',
          default: '127.0.0.1',
          describe: 'address to listen on (0.0.0.0 = every interface)',
        })
        .option('store', {
          type: 'string',
          default: process.env.GEX_STORE || DEFAULT_STORE_FILE,
          defaultDescription: `$GEX_STORE or ./${DEFAULT_STORE_FILE}`,
          describe: 'the store: a SQLite file or a postgres:// URL (created and migrated on first use)',
        })
        .option(
          'body-limit',
          integerOption('body-limit', {
            min: 1,
            max: MAX_BODY_LIMIT,
            default: DEFAULT_BODY_LIMIT,
            unit: 'bytes',
            describe: 'largest request body in bytes (larger → 413)',
          }),
        )
        .option(
          'max-file-size',
          integerOption('max-file-size', {
            min: 0,
            max: MAX_FILE_LIMIT,
            default: DEFAULT_FILE_LIMIT,
            unit: 'bytes',
            describe: 'largest file uploaded to File Storage in bytes (larger → 413)',
          }),
        )
        .option(
          'max-upload-memory',
          integerOption('max-upload-memory', {
            min: MIN_UPLOAD_MEMORY,
            max: 64 * 1024 ** 3,
            default: DEFAULT_UPLOAD_MEMORY,
            unit: 'bytes',
            describe:
              'bytes of memory all File Storage uploads together may hold (each up to 2 MiB; past it an upload → 503 with Retry-After)',
          }),
        )
        .option(
          'request-timeout',
          integerOption('request-timeout', {
            min: 1,
            max: 86_400,
            default: DEFAULT_REQUEST_TIMEOUT_MS / 1000,
            unit: 'seconds',
            describe: 'seconds to receive a whole request, File Storage uploads included (slower → 408)',
          }),
        )
        .option('durability', {
          type: 'string',
          defaultDescription: `$${DURABILITY_VARIABLE} or full`,
          describe: `SQLite store: ${DURABILITY_LEVELS.join(' or ')}. full fsyncs every commit, so an acknowledged write survives a power loss; normal is faster but may lose the last writes`,
        })
        .option('file-storage', fileStorageOption())
        .option('metrics', {
          type: 'boolean',
          default: true,
          describe:
            'serve Prometheus metrics at GET /metrics on the same address, without a token (--metrics false: no /metrics)',
        })
        .option(
          'workers',
          integerOption('workers', {
            min: 0,
            max: 256,
            default: 1,
            describe:
              'queue jobs run at once by this server, each as its own gex run process (0 = accept jobs, run none)',
          }),
        )
        .example('$0 serve --store gex-store.sqlite', 'serve a SQLite store on http://127.0.0.1:8080/v2/storage')
        .example(
          '$0 serve --host 0.0.0.0 --port 8080 --store postgres://gex@db/gex',
          'serve a PostgreSQL store on every interface',
        )
        .example('$0 serve --metrics false', 'no /metrics endpoint (GET /health stays)') as Argv<ServeArgs>,
    async (args) => {
      process.exitCode = await serve(args);
    },
  );
}

function listenError(error: unknown, args: ServeArgs): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    return new UserError(
      'GEX_SERVER_LISTEN_FAILED',
      `Port ${args.port} on ${args.host} is already in use: choose another one with --port`,
    );
  if (code === 'EACCES')
    return new UserError(
      'GEX_SERVER_LISTEN_FAILED',
      `Not allowed to listen on ${args.host}:${args.port}: choose a port above 1023 with --port`,
    );
  if (code === 'EADDRNOTAVAIL')
    return new UserError(
      'GEX_SERVER_LISTEN_FAILED',
      `Address ${args.host} is not available on this machine: choose another one with --host`,
    );
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new UserError(
      'GEX_SERVER_LISTEN_FAILED',
      `--host ${displayText(args.host)} is no address of this machine (not an IP address, and its name does not resolve): choose another one, e.g. 127.0.0.1 or 0.0.0.0`,
    );
  return error;
}

/** Serves until SIGINT/SIGTERM, then closes the server (finishing open requests) and the store. */
export async function serve(args: ServeArgs): Promise<number> {
  // a line per request: written in batches, one write per event-loop turn
  const { logger } = createCliLogging(args, { batchStdout: true });
  let backend: EmbeddedBackend | undefined;
  let platform: JobPlatform | undefined;
  let objects: ObjectStore | undefined;
  try {
    if (isRemoteStore(args.store))
      throw new UserError(
        'GEX_CLI_USAGE',
        'gex serve serves an embedded store: pass --store with a SQLite file or a postgres:// URL',
      );
    const [{ openEmbeddedStore }, { buildServer }] = await Promise.all([
      import('../../store/open-store.js'),
      import('../../server/app.js'),
    ]);
    // checked before anything is opened or created: a bad value is a clear error, not a silent default
    const env =
      args.durability === undefined
        ? process.env
        : { ...process.env, [DURABILITY_VARIABLE]: parseDurability(args.durability, '--durability') };
    durabilityFromEnv(env);
    const notifications = notificationSettings(args, process.env);
    const fileStorage = fileStorageSettings(args['file-storage'], process.env);
    if (fileStorage !== undefined) {
      // one upload into a bucket holds its parts in flight: the budget must fit one
      if (args['max-upload-memory'] < OBJECT_UPLOAD_MEMORY)
        throw new UserError(
          'GEX_CLI_USAGE',
          `--max-upload-memory must be at least ${OBJECT_UPLOAD_MEMORY} bytes with --file-storage (one upload to the bucket holds up to that much)`,
        );
    }
    // gex serve creates the store it is named (a new volume starts empty, see docs/security.md), and says so:
    // a mistyped --store shows up as "created a new, empty store" at start
    backend = await openEmbeddedStore(args.store, env, {
      builtinComponents: builtinComponents(),
      onCreate: (what) => logger.warn(`Created ${what}`),
    });
    // checked before anything is served: a wrong key or bucket is one line at start, not failed uploads later
    if (fileStorage !== undefined) objects = await openFileStorage(backend, fileStorage);
    const [{ JobPlatform }, { newRegistry }] = await Promise.all([
      import('../../jobs/job-platform.js'),
      import('../../server/operations/metrics.js'),
    ]);
    // jobs a server or worker that died left running end as error (or are retried) before anything is claimed
    platform = await JobPlatform.open(backend, {
      logger,
      retryLimit: args.retries,
      workers: workerSettings(args, args.workers, args.store),
      storageJobs: { logger },
      notifications,
      // one registry: /metrics serves the job metrics beside the server's own
      metrics: args.metrics ? newRegistry() : undefined,
    });
    await platform.start();
    if (args.workers === 0) await sayWhoRunsJobs(platform.queue, logger);
    const app = await buildServer({
      backend,
      ...platform.served,
      logger,
      bodyLimit: args['body-limit'],
      fileLimit: args['max-file-size'],
      uploadMemory: args['max-upload-memory'],
      requestTimeoutMs: args['request-timeout'] * 1000,
      metrics: args.metrics,
    });
    const store = backend.location;
    // fastify logs the address once it listens; this text replaces its default line
    const files = objects ? `, files: ${objects.location}` : '';
    const listenTextResolver = (address: string) =>
      `Storage API listening on ${address}/v2/storage (store: ${store}${files})`;
    const address = await app.listen({ port: args.port, host: args.host, listenTextResolver }).catch((e: unknown) => {
      throw listenError(e, args);
    });
    // without --public-url, notifications link to the address the server listens on
    platform.notifications.linkTo(address);
    const signal = await untilStopSignal();
    logger.info(`${signal} received: stopping`);
    await app.close();
    return 0;
  } catch (error) {
    if (error instanceof UserError) logger.error(errorLogFields(error), error.message);
    else logger.error({ err: error, ...errorLogFields(error) }, `Application error: ${(error as Error).message}`);
    return exitCodeOf(error);
  } finally {
    await platform?.stop();
    await backend?.close();
    objects?.close();
  }
}
