import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from '../common/logger.js';
import { requireToken } from './auth.js';
import type { ServerBackend } from './backend.js';
import { registerBodyParsers } from './http/body.js';
import { ReadCache, type ReadCacheLimits } from './operations/read-cache.js';
import { clientErrorHandler, errorHandler, frameworkErrorHandler, notFoundHandler } from './errors/errors.js';
import { MAX_ADDRESSABLE_ID_LENGTH } from '../store/addressable-id.js';
import { healthRoute } from './operations/health.js';
import type { Registry } from 'prom-client';
import { ServerMetrics } from './operations/metrics.js';
import { requestLog } from './operations/request-log.js';
import { observeResponses } from './operations/response-observers.js';
import { gexRevision } from './http/revision.js';
import { apiIndexRoutes } from './routes/api-index.js';
import { branchRoutes, requireDefaultBranch } from './routes/branches.js';
import { bucketRoutes } from './routes/buckets.js';
import { componentDetailRoute, componentListRoute, publicComponentRoute } from './routes/components.js';
import { configurationRoutes } from './routes/configurations.js';
import { storageJobRoutes } from './routes/storage-jobs.js';
import type { JobRepository } from '../jobs/job-repository.js';
import type { ScheduleRepository } from '../jobs/schedules/schedule-repository.js';
import type { QueueHooks } from '../jobs/job-platform.js';
import { queueRoutes } from './routes/queue.js';
import { consoleRoutes } from './console/console-plugin.js';
import { scheduleRoutes } from './routes/schedules.js';
import { notificationRoutes } from './routes/notifications.js';
import type { SubscriptionRepository } from '../jobs/notifications/subscription-repository.js';
import type { NotificationDeliveries } from './routes/notifications.js';
import { secretRoutes } from './routes/secrets.js';
import { queueEventRoutes } from './routes/queue-events.js';
import { metadataRoutes } from './routes/metadata.js';
import { rowVersionRoutes } from './routes/row-versions.js';
import { rowRoutes } from './routes/rows.js';
import { storageMetadataRoutes } from './routes/storage-metadata.js';
import { tableRoutes, type PreviewBounds } from './routes/tables.js';
import { tokenRoutes } from './routes/tokens.js';
import { versionRoutes } from './routes/versions.js';

import {
  DEFAULT_BODY_LIMIT,
  DEFAULT_FILE_LIMIT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_UPLOAD_MEMORY,
} from './http/limits.js';
import { ByteBudget } from './http/byte-budget.js';
import { fileRoutes, type FileLimits } from './routes/files.js';
import { tableFileRoutes } from './routes/table-file-routes.js';
import type { StorageJobRunner } from '../jobs/storage/storage-job-runner.js';
import { DEFAULT_PREVIEW_MAX_BYTES, DEFAULT_PREVIEW_TOTAL_BYTES, type PreviewLimits } from './storage/table-preview.js';

export { DEFAULT_BODY_LIMIT, DEFAULT_FILE_LIMIT, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_UPLOAD_MEMORY };

export interface ServerOptions {
  backend: ServerBackend;
  /** gex's logger (fastify's too: request.log is its child); none = silent */
  logger?: Logger;
  /** largest request body in bytes (default 16 MiB); larger ones get 413 */
  bodyLimit?: number;
  /** `revision` of the API index (default `gex-<version>`) */
  revision?: string;
  /** reuse encoded GET bodies while the store is unchanged (default on); false turns it off */
  readCache?: ReadCacheLimits | false;
  /** time to receive a whole request (default 60 s); a slower one gets 408 and its connection is closed */
  requestTimeoutMs?: number;
  /** count requests and serve `GET /metrics` (Prometheus, no token); default off (`gex serve` turns it on) */
  metrics?: boolean;
  /** the registry `/metrics` serves (the job platform's, with its job metrics); default: the server's own */
  metricsRegistry?: Registry;
  /** bytes of one data-preview answer (default 32 MiB) and of all held at once (default 128 MiB) */
  previews?: PreviewLimits;
  /** told of created and killed queue jobs (the embedded worker pool); none: jobs wait for a worker's poll */
  queueHooks?: QueueHooks;
  /** runs the storage jobs (imports, exports after their 202) of the File Storage routes; absent: those routes are not served */
  storageJobs?: StorageJobRunner;
  /** the job queue the Queue API serves (with `schedules`, the Scheduler API's); absent: neither API */
  queue?: JobRepository;
  /** the schedules the Scheduler API serves, beside the Queue API */
  schedules?: ScheduleRepository;
  /** the subscriptions the Notification API serves, beside the Queue API */
  subscriptions?: SubscriptionRepository;
  /** their events' delivery records and a sample sent now (gex's additions to the Notification API) */
  notifications?: NotificationDeliveries;
  /** largest file uploaded to File Storage, in bytes (default 5 GiB); larger ones get 413 */
  fileLimit?: number;
  /** bytes all File Storage uploads together hold in memory (default 64 MiB); past it an upload gets 503 */
  uploadMemory?: number;
  /** the web console at /console (default on) */
  console?: boolean;
}

const NO_HOOKS: QueueHooks = { created: () => undefined, killed: () => undefined };

interface StorageScope {
  previews: PreviewBounds;
  runner: StorageJobRunner | undefined;
  files: FileLimits;
}

/** Storage buckets, tables, their metadata and files (docs/storage-api.md#tables, #files), the same in both path forms. */
function tableScope(app: FastifyInstance, scope: StorageScope): void {
  bucketRoutes(app);
  tableRoutes(app, scope.previews);
  storageMetadataRoutes(app);
  if (scope.runner) tableFileRoutes(app, scope.runner, scope.files.fileBytes);
  fileRoutes(app, scope.files);
}

/** Routes of configurations and everything under them, the same in both path forms. */
function configurationScope(app: FastifyInstance): void {
  configurationRoutes(app);
  versionRoutes(app);
  rowRoutes(app);
  rowVersionRoutes(app);
}

/**
 * The Storage API v2 subset of component configurations (docs/storage-api.md#endpoints), every route under
 * `/v2/storage/branch/{default|1}/…` and the deprecated `/v2/storage/…` (metadata: branch form
 * only). Registers routes over what it is given and starts nothing (the background work is the
 * caller's, jobs/job-platform.ts). Call `listen()` on the result; `close()` does not close the backend.
 */
export async function buildServer(options: ServerOptions): Promise<FastifyInstance> {
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const app = Fastify({
    bodyLimit,
    ...(options.logger ? { loggerInstance: fastifyLogger(options.logger) } : { logger: false }),
    // one line per request (request-log.ts) instead of fastify's two
    logController: new LogController({ disableRequestLogging: true }),
    // every id that can be created fits (src/store/addressable-id.ts); longer segments get 414
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_ADDRESSABLE_ID_LENGTH },
    // a client that announces more body than it sends must not hold a connection forever
    requestTimeout,
    // node only enforces it when given at creation (not when set afterwards, as fastify does)
    http: {
      requestTimeout,
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(requestTimeout / 4))),
    },
    frameworkErrors: frameworkErrorHandler(bodyLimit),
    clientErrorHandler,
  });
  const { backend } = options;
  const previews: PreviewBounds = {
    maxBytes: options.previews?.maxBytes ?? DEFAULT_PREVIEW_MAX_BYTES,
    budget: new ByteBudget(options.previews?.totalBytes ?? DEFAULT_PREVIEW_TOTAL_BYTES),
  };
  const revision = options.revision ?? gexRevision();
  const storage: StorageScope = {
    previews,
    runner: options.storageJobs,
    files: {
      fileBytes: options.fileLimit ?? DEFAULT_FILE_LIMIT,
      uploads: new ByteBudget(options.uploadMemory ?? DEFAULT_UPLOAD_MEMORY),
    },
  };
  registerBodyParsers(app);
  app.setErrorHandler(errorHandler(bodyLimit));
  app.setNotFoundHandler(notFoundHandler);
  const metrics = options.metrics
    ? new ServerMetrics({ uploads: storage.files.uploads }, options.metricsRegistry)
    : undefined;
  metrics?.register(app);
  const log = options.logger && requestLog(options.logger);
  observeResponses(
    app,
    [log, metrics?.observe].filter((o) => o !== undefined),
  );
  // for probes and load balancers: no token, outside the Storage API's paths
  healthRoute(app, backend, { onFailure: (error) => metrics?.storeError(error) });
  // one cache of what is read from the store, for the APIs and the console alike
  const reads =
    options.readCache === false
      ? new ReadCache(async () => null)
      : new ReadCache(() => backend.changeMarker(), options.readCache);
  // the web console (docs/console.md): its own login (a session cookie), pages over the same parts
  if (options.console !== false) {
    await consoleRoutes(app, {
      backend,
      queue: options.queue,
      schedules: options.schedules,
      queueHooks: options.queueHooks ?? NO_HOOKS,
      previews,
      reads,
    });
  }

  // public as in Keboola: the API index and a component's detail (the registry is global; its
  // secrets are served only as ciphers). Everything inside a project needs a token.
  await app.register(
    async (open) => {
      const services = options.queue ? ['queue', 'scheduler', ...(options.subscriptions ? ['notification'] : [])] : [];
      apiIndexRoutes(open, backend, revision, services);
      publicComponentRoute(open, backend);
    },
    { prefix: '/v2/storage' },
  );

  await app.register(async (api) => {
    // the same tokens everywhere; the Queue and Scheduler APIs word a missing one as theirs do
    const storageToken = requireToken(backend, reads);
    const serviceToken = requireToken(backend, reads, 'service');

    await api.register(
      async (root) => {
        root.addHook('onRequest', storageToken);
        tokenRoutes(root, backend);
        secretRoutes(root, backend);
        branchRoutes(root);
        componentListRoute(root);
        configurationScope(root);
        tableScope(root, storage);
        storageJobRoutes(root);
        if (options.queue) queueEventRoutes(root, options.queue);
      },
      { prefix: '/v2/storage' },
    );

    await api.register(
      async (branch) => {
        branch.addHook('onRequest', storageToken);
        branch.addHook('onRequest', requireDefaultBranch);
        tokenRoutes(branch, backend);
        componentDetailRoute(branch);
        componentListRoute(branch);
        configurationScope(branch);
        tableScope(branch, storage);
        metadataRoutes(branch);
      },
      { prefix: '/v2/storage/branch/:branchId' },
    );

    // Keboola's Job Queue API, at the origin (the API index lists it as the service "queue")
    const queueJobs = options.queue;
    if (queueJobs)
      await api.register(async (queue) => {
        queue.addHook('onRequest', serviceToken);
        queueRoutes(queue, queueJobs, options.queueHooks ?? NO_HOOKS);
      });
    // Keboola's Scheduler API beside it (the service "scheduler"): schedules fire queue jobs
    const schedules = queueJobs && options.schedules;
    if (schedules)
      await api.register(async (scheduler) => {
        scheduler.addHook('onRequest', serviceToken);
        scheduleRoutes(scheduler, schedules);
      });
    // Keboola's Notification API (the service "notification"): subscriptions to job events
    const subscriptions = queueJobs && options.subscriptions;
    if (subscriptions)
      await api.register(async (notification) => {
        notification.addHook('onRequest', serviceToken);
        notificationRoutes(notification, subscriptions, options.notifications);
      });
  });

  await app.ready();
  return app;
}

/** gex's logger as fastify types its own (fastify's instance types are generic over the logger's type). */
function fastifyLogger(logger: Logger): FastifyBaseLogger {
  return logger;
}
