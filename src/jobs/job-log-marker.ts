import { createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from '../common/logger.js';
import type { Database } from '../store/sql/database.js';
import type { PostgresDatabase } from '../store/sql/postgres-database.js';

/** The LISTEN/NOTIFY channel told of every job-log append of a PostgreSQL store (one per store schema). */
export function jobLogChannelOf(storeSchema: string): string {
  return `gex_log_${createHash('sha256').update(storeSchema, 'utf8').digest('hex').slice(0, 16)}`;
}

/** The channel `db`'s job-log appends notify; null where there is none (SQLite). */
export async function jobLogChannel(db: Database): Promise<string | null> {
  if (db.dialect.name !== 'postgres' || !db.storeSchema) return null;
  return jobLogChannelOf((await db.storeSchema()).name);
}

export interface JobLogMarkerOptions {
  db: Pick<PostgresDatabase, 'openSession' | 'storeSchema'>;
  logger: Logger;
  /** the wait before listening again after a failure, doubled per failure up to `maxRetryMs` */
  retryMs?: number;
  maxRetryMs?: number;
  now?: () => number;
}

interface Listening {
  client: pg.Client;
  /** random per session: a marker of an earlier session never equals one of this */
  epoch: string;
  /** notifications received on this session */
  count: number;
}

/**
 * A marker of a PostgreSQL store's job logs for this process: `pg-log:<epoch>:<count>`, the count of
 * the notifications its one listening session received; it changes after every committed append
 * (appendJobEvents notifies in the append's transaction, delivered only once it is committed, so
 * once its lines are visible). Null while the session is not listening (before LISTEN succeeded,
 * after it broke): readers then read every time. The session is opened on the first read, and
 * again on a read after a break once the backoff has passed; close() ends it.
 *
 * Why a reader may skip reading while the marker equals the one it read before its last read of
 * the logs: a commit that read did not see committed after the read began, so after the marker
 * was read; its notification arrives after its commit, hence is counted after that marker was
 * read, and the marker differs. A notification counted before a marker was read belongs to a
 * commit already visible to reads that follow.
 */
export class JobLogMarker {
  private listening: Listening | undefined;
  private connecting: Promise<void> | undefined;
  private failures = 0;
  private nextAttempt = 0;
  private closed = false;
  private readonly now: () => number;

  constructor(private readonly options: JobLogMarkerOptions) {
    this.now = options.now ?? Date.now;
  }

  async marker(): Promise<string | null> {
    if (this.closed) return null;
    if (!this.listening && !this.connecting && this.now() >= this.nextAttempt) this.connecting = this.listen();
    // one attempt at a time, bounded by the store's connect and statement timeouts
    if (this.connecting) await this.connecting;
    const l = this.listening;
    return l ? `pg-log:${l.epoch}:${l.count}` : null;
  }

  private async listen(): Promise<void> {
    let client: pg.Client | undefined;
    let broken: Error | undefined;
    try {
      const channel = jobLogChannelOf((await this.options.db.storeSchema()).name);
      client = await this.options.db.openSession(`gex job log listener pid ${process.pid}`.slice(0, 63), (error) => {
        broken ??= error;
        if (client) this.lost(client, error);
      });
      const opened = client;
      const session: Listening = { client, epoch: randomBytes(8).toString('hex'), count: 0 };
      client.on('end', () => {
        broken ??= new Error('the connection ended');
        this.lost(opened, broken);
      });
      client.on('notification', (n) => {
        if (n.channel === channel) session.count++;
      });
      // the channel is gex_log_ and hex digits: nothing to quote
      await client.query(`LISTEN ${channel}`);
      if (broken) throw broken;
      if (this.closed) {
        await client.end().catch(() => undefined);
        return;
      }
      this.listening = session;
      this.failures = 0;
    } catch (error) {
      await client?.end().catch(() => undefined);
      if (!this.closed) this.failed(error as Error);
    } finally {
      this.connecting = undefined;
    }
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.listening?.client !== client) return;
    this.listening = undefined;
    void client.end().catch(() => undefined);
    if (!this.closed) this.failed(error);
  }

  private failed(error: Error): void {
    const { retryMs = 1000, maxRetryMs = 30_000, logger } = this.options;
    const wait = Math.min(maxRetryMs, retryMs * 2 ** Math.min(this.failures, 16));
    this.failures++;
    this.nextAttempt = this.now() + wait;
    logger.warn(
      `Job log notifications: ${error.message}; live logs are read on every poll (listening again in ${wait} ms)`,
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connecting;
    const l = this.listening;
    this.listening = undefined;
    await l?.client.end().catch(() => undefined);
  }
}
