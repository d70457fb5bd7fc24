import { createHash } from 'node:crypto';
import PgBoss from 'pg-boss';
import type { PostgresDatabase } from '../../store/sql/postgres-database.js';
import type { RunnableJob } from '../job-repository.js';

/** pg-boss's queue of "run this job" messages */
export const DISPATCH_QUEUE = 'gex-queue-jobs';
/**
 * A message is active only between a worker fetching it and claiming its job (milliseconds); one
 * whose worker died in between is handed out again after this long.
 */
const HANDOUT_EXPIRE_SECONDS = 30;
const HANDOUT_RETRIES = 100;
/** pg-boss's own messages are history of no use: gone a day after they are handled */
const MESSAGE_RETENTION_SECONDS = 24 * 3600;
/** starts of pg-boss tried before a dispatch gives up (the monitors' reconcile sends later) */
const START_ATTEMPTS = 5;

/** A dispatched job as a worker fetched it: pg-boss's message id, the job and its attempt. */
export interface Handout extends RunnableJob {
  messageId: string;
}

const hash = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * pg-boss's schema for a store: beside the store's own, one per store schema (pg-boss wants a
 * plain name of at most 50 characters).
 */
export function bossSchemaOf(storeSchema: string): string {
  return /^[a-z_][a-z0-9_]{0,40}$/.test(storeSchema)
    ? `${storeSchema}_pgboss`
    : `gex_pgboss_${hash(storeSchema).slice(0, 16)}`;
}

/** The LISTEN/NOTIFY channel that tells a store's workers a job was dispatched. */
export function notifyChannelOf(storeSchema: string): string {
  return `gex_jobs_${hash(storeSchema).slice(0, 16)}`;
}

/**
 * The message id of one attempt of one job: the same dispatch sent twice (after a crash, by two
 * processes reconciling) is one message, as pg-boss ignores a send whose id it has.
 */
export function messageIdOf(storeSchema: string, job: RunnableJob): string {
  const h = hash(`gex.queue-job:${storeSchema}:${job.id}:${job.attempt}`);
  // shaped as a UUID (version nibble 5, variant 10xx): pg-boss's id column is a uuid
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * The dispatch of a PostgreSQL store's queue jobs through pg-boss: a job next to run for its
 * configuration is one pg-boss message; workers on any machine fetch messages (pg-boss hands each
 * to exactly one, SKIP LOCKED) and claim the job it names. Which job of a configuration is next is
 * the store's rule (JobRepository); pg-boss moves the messages and hands out again those whose
 * worker died before claiming. A send also NOTIFYs the store's channel, so idle workers fetch at
 * once instead of at their next poll.
 */
export class PgBossDispatch {
  private started: Promise<{ boss: PgBoss; schema: string }> | undefined;

  constructor(
    private readonly db: PostgresDatabase,
    private readonly options: {
      /** runs pg-boss's maintenance (expiry, archiving) here: servers and workers, not one-off commands */
      supervise: boolean;
      onError: (error: Error) => void;
    },
  ) {}

  /** Starts pg-boss now (a server or worker: the first job is then not slowed by its start). */
  async ready(): Promise<void> {
    await this.boss();
  }

  /**
   * pg-boss started on the store's database (its schema created on first use) and the store's
   * schema. Processes starting together on a new store race on pg-boss's tables (PostgreSQL may
   * abort one of them as a deadlock): a failed start is tried again.
   */
  private boss(): Promise<{ boss: PgBoss; schema: string }> {
    this.started ??= (async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.start();
        } catch (error) {
          if (attempt >= START_ATTEMPTS) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 400));
        }
      }
    })();
    this.started.catch(() => (this.started = undefined));
    return this.started;
  }

  private async start(): Promise<{ boss: PgBoss; schema: string }> {
    const schema = (await this.db.storeSchema()).name;
    const boss = new PgBoss({
      connectionString: this.db.connectionString,
      schema: bossSchemaOf(schema),
      application_name: 'gex pg-boss',
      max: 2,
      supervise: this.options.supervise,
      schedule: false,
      migrate: true,
      deleteAfterSeconds: MESSAGE_RETENTION_SECONDS,
      archiveCompletedAfterSeconds: 3600,
    });
    boss.on('error', this.options.onError);
    try {
      await boss.start();
      await this.ensureQueue(boss);
    } catch (error) {
      await boss.stop({ graceful: false, wait: true, timeout: 1000 }).catch(() => undefined);
      throw error;
    }
    return { boss, schema };
  }

  private async ensureQueue(boss: PgBoss): Promise<void> {
    if (await boss.getQueue(DISPATCH_QUEUE)) return;
    // another process may create it at the same moment: its error is then no error
    await boss
      .createQueue(DISPATCH_QUEUE, { name: DISPATCH_QUEUE, policy: 'standard' })
      .catch(async (error: unknown) => {
        if (!(await boss.getQueue(DISPATCH_QUEUE))) throw error;
      });
  }

  /** The channel this store's sends NOTIFY. */
  async channel(): Promise<string> {
    return notifyChannelOf((await this.db.storeSchema()).name);
  }

  /**
   * Sends one message per job (idempotent per job and attempt), then wakes the workers: one job
   * (a POST) only when its message is new; several (a flow's phase, a reconcile) in one insert,
   * whose new messages pg-boss does not tell apart, so they always wake them.
   */
  async send(jobs: readonly RunnableJob[]): Promise<void> {
    if (jobs.length === 0) return;
    const { boss, schema } = await this.boss();
    const options = (job: RunnableJob) => ({
      id: messageIdOf(schema, job),
      expireInSeconds: HANDOUT_EXPIRE_SECONDS,
      retryLimit: HANDOUT_RETRIES,
      retryDelay: 1,
    });
    const data = (job: RunnableJob) => ({ jobId: job.id, attempt: job.attempt });
    if (jobs.length === 1) {
      // a message pg-boss had already (a repeated send) wakes nobody
      if ((await boss.send(DISPATCH_QUEUE, data(jobs[0]), options(jobs[0]))) === null) return;
    } else {
      // one statement, not a round trip per job: a phase's tasks are handed out together (ids already there are kept)
      await boss.insert(jobs.map((job) => ({ name: DISPATCH_QUEUE, data: data(job), ...options(job) })));
    }
    await this.db.run(`SELECT pg_notify(?, '')`, [notifyChannelOf(schema)]);
  }

  /** Up to `max` messages, each now this worker's to claim. */
  async fetch(max: number): Promise<Handout[]> {
    if (max <= 0) return [];
    const { boss } = await this.boss();
    const messages = await boss.fetch<{ jobId?: unknown; attempt?: unknown }>(DISPATCH_QUEUE, { batchSize: max });
    return messages.flatMap((m) => {
      const id = Number(m.data?.jobId);
      const attempt = Number(m.data?.attempt ?? 1);
      return Number.isSafeInteger(id) && Number.isSafeInteger(attempt) ? [{ messageId: m.id, id, attempt }] : [];
    });
  }

  /** The message is handled (its job claimed, or no longer to run). */
  async done(messageId: string): Promise<void> {
    const { boss } = await this.boss();
    await boss.complete(DISPATCH_QUEUE, messageId);
  }

  /** The message could not be handled now: pg-boss hands it out again shortly. */
  async later(messageId: string): Promise<void> {
    const { boss } = await this.boss();
    await boss.fail(DISPATCH_QUEUE, messageId);
  }

  async stop(): Promise<void> {
    const started = this.started;
    this.started = undefined;
    const { boss } = (await started?.catch(() => undefined)) ?? {};
    await boss?.stop({ graceful: false, wait: true, timeout: 5000 });
  }
}
