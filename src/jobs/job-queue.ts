import type { Logger } from '../common/logger.js';
import type { EmbeddedBackend } from '../store/embedded/embedded-backend.js';
import type { PostgresDatabase } from '../store/sql/postgres-database.js';
import type { PgBossDispatch } from './dispatch/pg-boss-dispatch.js';
import { JobRepository } from './job-repository.js';
import { StoreClaimSource, type JobSource } from './job-source.js';

export interface JobQueueOptions {
  logger: Logger;
  /** retries of jobs created through this queue (`--retries`; default 0) */
  retryLimit?: number;
  /** runs pg-boss's maintenance: long-running servers and workers, not one-off commands */
  supervise?: boolean;
}

/** A store's job queue as one process uses it: the jobs, and where a worker pool gets them. */
export interface JobQueue {
  readonly jobs: JobRepository;
  /** the store's dispatch: `multi-machine` (PostgreSQL, pg-boss) or `one-machine` (SQLite) */
  readonly scope: 'one-machine' | 'multi-machine';
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
  const { logger, retryLimit = 0 } = options;
  if (backend.db.dialect.name !== 'postgres') {
    const jobs = new JobRepository(backend.db, { retryLimit });
    return {
      jobs,
      scope: 'one-machine',
      source: () => Promise.resolve(new StoreClaimSource(jobs, logger)),
      close: () => Promise.resolve(),
    };
  }
  const db = backend.db as PostgresDatabase;
  const [{ PgBossDispatch }, { PgBossSource }] = await Promise.all([
    import('./dispatch/pg-boss-dispatch.js'),
    import('./dispatch/pg-boss-source.js'),
  ]);
  const dispatch: PgBossDispatch = new PgBossDispatch(db, {
    supervise: options.supervise ?? false,
    onError: (error) => logger.warn(`Job dispatch (pg-boss): ${error.message}`),
  });
  const jobs = new JobRepository(db, {
    retryLimit,
    // a send that fails is found again by the monitors' reconcile within seconds
    onRunnable: (runnable) =>
      dispatch.send(runnable).catch((error: unknown) => logger.warn(`Job dispatch: ${(error as Error).message}`)),
  });
  return {
    jobs,
    scope: 'multi-machine',
    source: (onLocksLost) => Promise.resolve(new PgBossSource({ db, jobs, dispatch, logger, onLocksLost })),
    close: () => dispatch.stop(),
  };
}
