import type { Registry } from 'prom-client';
import type { Logger } from '../common/logger.js';
import type { EmbeddedBackend } from '../store/embedded/embedded-backend.js';
import { BackgroundServices, type BackgroundService } from './background-services.js';
import { openJobQueue, type JobQueue } from './job-queue.js';
import type { QueueJob } from './job-record.js';
import type { JobRepository } from './job-repository.js';
import type { ScheduleRepository } from './schedules/schedule-repository.js';
import type { SubscriptionRepository } from './notifications/subscription-repository.js';
import type { NotificationOutbox } from './notifications/notification-outbox.js';
import { checkLongRuns, LONG_RUN_CHECK_MS } from './notifications/long-run-check.js';
import { storageJobServices, type StorageJobSettings } from './storage/storage-job-services.js';
import type { StorageJobRunner } from './storage/storage-job-runner.js';
import type { WorkerPool } from './worker-pool.js';
import { JobPlatformMetrics, readQueueFigures } from './job-platform-metrics.js';
import {
  NotificationSender,
  type EmailChannel,
  type NotificationSenderOptions,
} from './notifications/notification-sender.js';

/** how often a process looks for flow runs whose wait ran out */
const FLOW_STEP_MS = 1000;

/** What the Queue API tells the process's worker pool: a job was created, or asked to be killed. */
export interface QueueHooks {
  created(job: QueueJob): void;
  killed(job: QueueJob): void;
}

/** The worker pool of a process that runs queue jobs. */
export interface WorkerSettings {
  /** jobs run at once (0: none; the pool still says it is there) */
  count: number;
  jobTimeoutSeconds: number;
  retentionDays: number;
  /** the store the jobs' processes run against */
  store: string;
  /** how to start gex: [node, script] */
  command: readonly string[];
}

export interface JobPlatformOptions {
  logger: Logger;
  /** retries of jobs created through this process (`--retries`; default 0) */
  retryLimit?: number;
  /** the worker pool and the schedule ticker (and pg-boss's maintenance); absent: this process runs no queue jobs and fires no schedules */
  workers?: WorkerSettings;
  /** a server's storage jobs (imports, exports), the end of dead servers' ones, the file purge; absent: none */
  storageJobs?: StorageJobSettings;
  /** how this process delivers notifications (every server and worker delivers the store's outbox) */
  notifications?: NotificationSettings;
  /** the job metrics (JobPlatformMetrics) in this registry: a server's `/metrics`, a worker's listener; absent: none */
  metrics?: Registry;
}

/** The delivery settings of a process: its SMTP relay, the console's public origin for links. */
export interface NotificationSettings {
  email?: EmailChannel;
  publicUrl?: string;
  onAttempt?: NotificationSenderOptions['onAttempt'];
}

/** What a server serves of the platform (buildServer's options of the same names). */
export interface ServedJobs {
  queue: JobRepository;
  schedules: ScheduleRepository;
  subscriptions: SubscriptionRepository;
  /** the notification events and their attempts (delivery records), and this process's sender (a test now) */
  notifications: { outbox: NotificationOutbox; sender: NotificationSender };
  queueHooks: QueueHooks;
  storageJobs?: StorageJobRunner;
  /** the registry of the job metrics, which the server's `/metrics` serves with its own (absent: no job metrics) */
  metricsRegistry?: Registry;
}

/**
 * Everything `gex serve` and `gex worker` run in the background, started and stopped in one order:
 * the store's job queue (its dispatch), a server's storage jobs, the worker pool (jobs dead workers
 * left are ended first), the schedule ticker. Stopped in reverse: no tick fires into a stopped pool,
 * no job is dispatched after the queue closed. The store itself is the caller's (close it after).
 */
export class JobPlatform {
  private constructor(
    readonly queue: JobQueue,
    readonly served: ServedJobs,
    private readonly services: BackgroundServices,
    /** the delivery of the store's notification outbox in this process */
    readonly notifications: NotificationSender,
    /** this process's job metrics (absent: JobPlatformOptions.metrics was not given) */
    readonly metrics: JobPlatformMetrics | undefined,
  ) {}

  static async open(backend: EmbeddedBackend, options: JobPlatformOptions): Promise<JobPlatform> {
    const { logger, workers } = options;
    const holder: { sender?: NotificationSender } = {};
    let pool: WorkerPool | undefined;
    let lastReadWarning = -Infinity;
    const metrics =
      options.metrics &&
      new JobPlatformMetrics(
        options.metrics,
        {
          queue: () => readQueueFigures(backend.db),
          workers: () => pool?.slots() ?? { busy: 0, idle: 0 },
        },
        (error) => {
          // a scrape every few seconds during a database outage: one line a minute
          if (Date.now() - lastReadWarning < 60_000) return;
          lastReadWarning = Date.now();
          logger.warn(`Job metrics: the queue figures could not be read: ${error.message}`);
        },
      );
    const queue = await openJobQueue(backend, {
      logger,
      retryLimit: options.retryLimit,
      supervise: !!workers,
      onNotificationEvents: () => holder.sender?.wake(),
      onJobsEnded: metrics && ((ends) => metrics.jobsEnded(ends)),
    });
    const onAttempt = options.notifications?.onAttempt;
    const sender = (holder.sender = new NotificationSender({
      outbox: queue.outbox,
      subscriptions: queue.subscriptions,
      logger,
      ...options.notifications,
      onAttempt:
        metrics || onAttempt
          ? (channel, counted) => {
              metrics?.notificationAttempt(channel, counted);
              onAttempt?.(channel, counted);
            }
          : undefined,
    }));
    const [{ WorkerPool }, { startScheduleTicker }] = await Promise.all([
      import('./worker-pool.js'),
      import('./schedules/schedule-ticker.js'),
    ]);
    const storage = options.storageJobs && storageJobServices(backend, options.storageJobs);
    const workerPool: BackgroundService = {
      name: 'worker pool',
      start: async () => {
        if (!workers) return;
        const source = await queue.source((error) => {
          logger.error(
            `Job locks lost (${error.message}): stopping this worker's jobs, another worker may run them again`,
          );
          pool?.abandonAll();
        });
        pool = new WorkerPool({
          jobs: queue.jobs,
          source,
          workers: workers.count,
          jobTimeoutSeconds: workers.jobTimeoutSeconds,
          retentionDays: workers.retentionDays,
          store: workers.store,
          command: workers.command,
          logger,
          registry: queue.registry,
        });
        await pool.start();
      },
      stop: async () => pool?.stop(),
    };
    let ticker: { stop(): Promise<void> } | undefined;
    let longRuns: NodeJS.Timeout | undefined;
    let flowSteps: NodeJS.Timeout | undefined;
    const services = new BackgroundServices([
      { name: 'job queue', start: async () => undefined, stop: () => queue.close() },
      // every server and worker delivers the outbox, whichever is alive (stopped after the pool: a last job's end is sent)
      { name: 'notifications', start: async () => sender.start(), stop: () => sender.stop() },
      ...(storage?.services ?? []),
      workerPool,
      {
        // a flow's step is taken in the transaction of what it reacts to; waits (delays, retries) end here
        name: 'flow steps',
        start: async () => {
          flowSteps = setInterval(() => {
            void queue.jobs
              .advanceDueFlows()
              .then((count) => count > 0 && pool?.wake())
              .catch((error: unknown) => logger.warn(`Flows: ${(error as Error).message}`));
          }, FLOW_STEP_MS);
          flowSteps.unref();
        },
        stop: async () => clearInterval(flowSteps),
      },
      {
        // the workers' monitor of long runs: every process with a pool looks; the outbox keeps one event per job
        name: 'long-run check',
        start: async () => {
          if (!workers) return;
          let checking = false;
          longRuns = setInterval(() => {
            if (checking) return;
            checking = true;
            void checkLongRuns(backend.db)
              .then((written) => written > 0 && sender.wake())
              .catch((error: unknown) => logger.warn(`Long-run check: ${(error as Error).message}`))
              .finally(() => (checking = false));
          }, LONG_RUN_CHECK_MS);
          longRuns.unref();
        },
        stop: async () => clearInterval(longRuns),
      },
      {
        name: 'schedule ticker',
        // every server and worker fires due schedule ticks; the store makes each tick one job
        start: async () => {
          if (workers)
            ticker = startScheduleTicker(backend, queue, logger, {
              onJob: () => pool?.wake(),
              onFired: metrics && (() => metrics.scheduleFired()),
              onMissed: metrics && ((ticks) => metrics.schedulesMissed(ticks)),
            });
        },
        stop: async () => ticker?.stop(),
      },
    ]);
    const served: ServedJobs = {
      queue: queue.jobs,
      schedules: queue.schedules,
      subscriptions: queue.subscriptions,
      notifications: { outbox: queue.outbox, sender },
      queueHooks: { created: () => pool?.wake(), killed: (job) => pool?.kill(job.id) },
      storageJobs: storage?.runner,
      metricsRegistry: options.metrics,
    };
    return new JobPlatform(queue, served, services, sender, metrics || undefined);
  }

  start(): Promise<void> {
    return this.services.start();
  }

  stop(): Promise<void> {
    return this.services.stop();
  }
}
