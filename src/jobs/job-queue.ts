import type { Logger } from '../common/logger.js';
import type { EmbeddedBackend } from '../store/embedded/embedded-backend.js';
import type { PostgresDatabase } from '../store/sql/postgres-database.js';
import type { PgBossDispatch } from './dispatch/pg-boss-dispatch.js';
import { JobRepository, type JobRepositoryOptions } from './job-repository.js';
import { FlowNotifications } from './flows/flow-notifications.js';
import type { DueNotification } from './flows/flow-runs.js';
import { ScheduleRepository } from './schedules/schedule-repository.js';
import { SubscriptionRepository } from './notifications/subscription-repository.js';
import { NotificationOutbox } from './notifications/notification-outbox.js';
import { StoreClaimSource, type JobSource } from './job-source.js';
import { WorkerRegistry } from './worker-registry.js';

export interface JobQueueOptions {
  logger: Logger;
  /** retries of jobs created through this queue (`--retries`; default 0) */
  retryLimit?: number;
  /** runs pg-boss's maintenance: long-running servers and workers, not one-off commands */
  supervise?: boolean;
  /** told after a commit that wrote notification events (the process's sender looks at once) */
  onNotificationEvents?: () => void;
  /** told after a commit of the jobs whose end it committed (the job metrics) */
  onJobsEnded?: JobRepositoryOptions['onJobsEnded'];
}

/** what a subscription's sealed secrets are bound to (with its project) */
export const SUBSCRIPTION_SECRETS = 'notification-subscription';

/** A store's job queue as one process uses it: the jobs, and where a worker pool gets them. */
export interface JobQueue {
  readonly jobs: JobRepository;
  /** the store's schedules (they fire jobs into `jobs`) */
  readonly schedules: ScheduleRepository;
  /** the store's Notification API subscriptions */
  readonly subscriptions: SubscriptionRepository;
  /** the events to deliver and their attempts */
  readonly outbox: NotificationOutbox;
  /** the store's dispatch: `multi-machine` (PostgreSQL, pg-boss) or `one-machine` (SQLite) */
  readonly scope: 'one-machine' | 'multi-machine';
  /** the worker pools of the store's servers and workers (who runs its jobs) */
  readonly registry: WorkerRegistry;
  /** a worker pool's source; `onLocksLost`: what guarded its running jobs is gone */
  source(onLocksLost: (error: Error) => void): Promise<JobSource>;
  close(): Promise<void>;
}

/**
 * The queue of an embedded store. SQLite: jobs are claimed straight from the store by the one
 * server's pool. PostgreSQL: every job next to run is sent through pg-boss, so servers and workers
 * on any number of machines share it (docs/jobs.md).
 */
export async function openJobQueue(backend: EmbeddedBackend, options: JobQueueOptions): Promise<JobQueue> {
  const { logger, retryLimit = 0, onNotificationEvents, onJobsEnded } = options;
  const outbox = new NotificationOutbox(backend.db);
  const registry = new WorkerRegistry(backend.db);
  const subscriptions = new SubscriptionRepository(backend.db, backend.projectSecrets(SUBSCRIPTION_SECRETS));
  // a flow's notification tasks, sent after the commit that made them due, their outcome recorded
  const notifications = new FlowNotifications(logger);
  const holder: { jobs?: JobRepository } = {};
  const onNotifications = (due: DueNotification[]) =>
    notifications.send(due, (rootId, taskId, failure) => holder.jobs!.notificationSent(rootId, taskId, failure));
  if (backend.db.dialect.name !== 'postgres') {
    const jobs = (holder.jobs = new JobRepository(backend.db, {
      retryLimit,
      workerGone: (job) => registry.gone(job.worker),
      onNotifications,
      onNotificationEvents,
      onJobsEnded,
    }));
    return {
      jobs,
      schedules: new ScheduleRepository(backend.db),
      subscriptions,
      outbox,
      scope: 'one-machine',
      registry,
      source: () => Promise.resolve(new StoreClaimSource(jobs, registry, logger)),
      close: () => Promise.resolve(),
    };
  }
  const db = backend.db as PostgresDatabase;
  const [{ PgBossDispatch }, { PgBossSource }, { JobLocks }, { JobLogMarker }] = await Promise.all([
    import('./dispatch/pg-boss-dispatch.js'),
    import('./dispatch/pg-boss-source.js'),
    import('../store/sql/advisory-locks.js'),
    import('./job-log-marker.js'),
  ]);
  // the live log's marker: one listening session, opened on the first read (a console's live log)
  const logMarker = new JobLogMarker({ db, logger });
  // a kill asks PostgreSQL whether a worker holds the job's session lock (opened on the first kill that needs it)
  const killLocks = new JobLocks(db, 'job kill', () => undefined);
  const dispatch: PgBossDispatch = new PgBossDispatch(db, {
    supervise: options.supervise ?? false,
    onError: (error) => logger.warn(`Job dispatch (pg-boss): ${error.message}`),
  });
  const jobs = (holder.jobs = new JobRepository(db, {
    retryLimit,
    onNotifications,
    onNotificationEvents,
    onJobsEnded,
    logMarker: () => logMarker.marker(),
    workerGone: async (job) => {
      if (!(await killLocks.takeIfOrphaned(job.id))) return false;
      // a job that is terminating is claimed by no worker: letting go at once is safe
      await killLocks.unlock(job.id);
      return true;
    },
    // a send that fails is found again by the monitors' reconcile within seconds
    onRunnable: (runnable) =>
      dispatch.send(runnable).catch((error: unknown) => logger.warn(`Job dispatch: ${(error as Error).message}`)),
  }));
  return {
    jobs,
    schedules: new ScheduleRepository(db),
    subscriptions,
    outbox,
    scope: 'multi-machine',
    registry,
    source: (onLocksLost) => Promise.resolve(new PgBossSource({ db, jobs, dispatch, logger, onLocksLost })),
    close: async () => {
      await logMarker.close();
      await killLocks.close();
      await dispatch.stop();
    },
  };
}
