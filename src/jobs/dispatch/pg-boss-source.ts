import type pg from 'pg';
import type { Logger } from '../../common/logger.js';
import type { PostgresDatabase } from '../../store/sql/postgres-database.js';
import type { JobRepository } from '../job-repository.js';
import { endLostJobs, type ClaimedJob, type JobSource } from '../job-source.js';
import { JobLocks } from '../../store/sql/advisory-locks.js';
import type { PgBossDispatch } from './pg-boss-dispatch.js';

/** how often every server and worker looks for jobs whose worker died */
export const MONITOR_INTERVAL_MS = 5000;
/** every this many checks, also for jobs a crash left undispatched (rare: a message is sent with its commit) */
const RECONCILE_EVERY = 12;

export interface PgBossSourceOptions {
  db: PostgresDatabase;
  jobs: JobRepository;
  dispatch: PgBossDispatch;
  logger: Logger;
  /** the session holding this worker's job locks broke: its running jobs are no longer guarded */
  onLocksLost: (error: Error) => void;
  monitorIntervalMs?: number;
}

/**
 * A PostgreSQL store's source, for any number of workers on any machines: jobs arrive as pg-boss
 * messages (PgBossDispatch); a worker takes the job's session lock (JobLocks), then claims the job.
 * Its monitor, on every server and worker, ends the jobs whose lock nobody holds (their worker
 * died) and sends again what a crash left undispatched.
 */
export class PgBossSource implements JobSource {
  private readonly locks: JobLocks;
  private readonly monitorLocks: JobLocks;
  private listener: pg.Client | undefined;
  private monitor: NodeJS.Timeout | undefined;
  private monitoring: Promise<void> | undefined;
  private stopped = false;
  private checks = 0;
  private wake: () => void = () => undefined;

  constructor(private readonly options: PgBossSourceOptions) {
    this.locks = new JobLocks(options.db, 'worker', options.onLocksLost);
    this.monitorLocks = new JobLocks(options.db, 'job monitor', () => undefined);
  }

  async start(wake: () => void): Promise<void> {
    this.wake = wake;
    await this.options.dispatch.ready();
    await this.check();
    await this.listen();
    this.monitor = setInterval(() => {
      if (this.monitoring) return;
      this.monitoring = this.check().finally(() => (this.monitoring = undefined));
    }, this.options.monitorIntervalMs ?? MONITOR_INTERVAL_MS);
    this.monitor.unref();
  }

  /** Wakes the pool when a job is dispatched (by any process); the pool's poll covers a lost connection. */
  private async listen(): Promise<void> {
    const channel = await this.options.dispatch.channel();
    const client = await this.options.db.openSession(`gex worker listener pid ${process.pid}`.slice(0, 63), (error) => {
      this.options.logger.warn(`Job dispatch: the notification connection broke (${error.message}); polling`);
      this.listener = undefined;
    });
    client.on('notification', () => this.wake());
    await client.query(`LISTEN ${channel}`);
    this.listener = client;
  }

  /** Ends jobs whose worker is gone; dispatches what is runnable but may not have been sent. */
  private async check(): Promise<void> {
    const { jobs, logger, dispatch } = this.options;
    try {
      for (const job of await jobs.running()) {
        const { id } = job;
        if (this.stopped) return;
        if (!(await this.monitorLocks.takeIfOrphaned(id))) continue;
        try {
          await endLostJobs(jobs, [job], logger);
        } finally {
          await this.monitorLocks.unlock(id);
        }
      }
      if (this.checks++ % RECONCILE_EVERY === 0) await dispatch.send(await jobs.reconcile());
      if (!this.listener && this.checks > 1 && !this.stopped) await this.listen();
    } catch (error) {
      logger.warn(`Job monitor: ${(error as Error).message}`);
    }
  }

  async claim(max: number, worker: string): Promise<ClaimedJob[]> {
    const { jobs, dispatch } = this.options;
    const claimed: ClaimedJob[] = [];
    for (const handout of await dispatch.fetch(max)) {
      if (!(await this.locks.lock(handout.id))) {
        // another worker holds it (a duplicate message), or a monitor looks at it: handed out again shortly
        await dispatch.later(handout.messageId);
        continue;
      }
      let job;
      try {
        job = await jobs.claim(handout.id, worker);
      } catch (error) {
        await this.locks.unlock(handout.id).catch(() => undefined);
        await dispatch.later(handout.messageId).catch(() => undefined);
        throw error;
      }
      if (job) {
        const id = job.id;
        claimed.push({ job, release: () => this.locks.unlock(id) });
      } else await this.locks.unlock(handout.id);
      // handled either way: the job is this worker's now, or not to run (cancelled, run already); a message
      // not marked done is handed out again after its expiry and then found handled — so the job need not wait
      void dispatch.done(handout.messageId).catch(() => undefined);
    }
    return claimed;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.monitor);
    await this.monitoring;
    await this.listener?.end().catch(() => undefined);
    await this.locks.close();
    await this.monitorLocks.close();
  }
}
