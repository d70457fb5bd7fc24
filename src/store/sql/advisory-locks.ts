import os from 'node:os';
import type pg from 'pg';
import type { PostgresDatabase } from './postgres-database.js';

/**
 * The two-key advisory lock of a job: the store's schema (hashed by the server) and the job id — a
 * queue job's id as is, a Storage job's (up to 2^47) hashed. The run lock's one-key locks
 * (store/run-lock) live in another part of the lock space.
 */
const LOCK_ARGS = {
  'queue-job': `hashtext('gex.queue-job:' || $2::text), $1::int`,
  'storage-job': `hashtext('gex.storage-job:' || $2::text), hashtext($1::text)`,
} as const;
const LOCK_TRIES = 5;
const LOCK_RETRY_MS = 50;

/**
 * Who is alive, told by PostgreSQL: a worker holds a session advisory lock on each job it runs, on
 * a connection of its own, from before the job is marked `processing` until after its end is
 * recorded. When the worker dies (kill -9, a lost machine) its session ends and its locks with it,
 * so a `processing` job whose lock anyone can take has no worker — however the worker died and
 * whichever machine asks.
 */
export class JobLocks {
  private client: Promise<pg.Client> | undefined;

  constructor(
    private readonly db: PostgresDatabase,
    /** what the session is called in pg_stat_activity */
    private readonly purpose: string,
    /** the session broke: every lock it held is gone */
    private readonly onLost: (error: Error) => void,
    private readonly kind: keyof typeof LOCK_ARGS = 'queue-job',
  ) {}

  private session(): Promise<pg.Client> {
    this.client ??= (async () => {
      const name = `gex ${this.purpose} pid ${process.pid} on ${os.hostname()}`.slice(0, 63);
      const client = await this.db.openSession(name, (error) => {
        this.client = undefined;
        this.onLost(error);
      });
      return client;
    })();
    this.client.catch(() => (this.client = undefined));
    return this.client;
  }

  /** the lock's parameters: the job and the store's schema */
  private async key(jobId: number): Promise<[number, string]> {
    return [jobId, (await this.db.storeSchema()).name];
  }

  /** Takes the job's lock (a few tries: a monitor may hold it for a moment); false when another holds it. */
  async lock(jobId: number): Promise<boolean> {
    const client = await this.session();
    for (let i = 0; i < LOCK_TRIES; i++) {
      const { rows } = await client.query<{ ok: boolean }>(
        `SELECT pg_try_advisory_lock(${LOCK_ARGS[this.kind]}) AS ok`,
        await this.key(jobId),
      );
      if (rows[0]?.ok) return true;
      await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
    }
    return false;
  }

  async unlock(jobId: number): Promise<void> {
    const client = await this.session();
    await client.query(`SELECT pg_advisory_unlock(${LOCK_ARGS[this.kind]})`, await this.key(jobId));
  }

  /**
   * Whether no session holds the job's lock. When none does, this session holds it on return,
   * so no worker can take the job before `unlock` (the caller records the job's end first).
   */
  async takeIfOrphaned(jobId: number): Promise<boolean> {
    const client = await this.session();
    const { rows } = await client.query<{ ok: boolean }>(
      `SELECT pg_try_advisory_lock(${LOCK_ARGS[this.kind]}) AS ok`,
      await this.key(jobId),
    );
    return rows[0]?.ok === true;
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await (await client?.catch(() => undefined))?.end().catch(() => undefined);
  }
}

/**
 * A store-wide lock of one kind of work (`name`: a fixed word such as 'object-sweep') that one
 * process at a time does: a session advisory lock keyed by the name and the store's schema, on a
 * connection of its own. Returns its release, or undefined when another session holds it. A
 * holder that dies loses it with its session.
 */
export async function trySingletonLock(db: PostgresDatabase, name: string): Promise<(() => Promise<void>) | undefined> {
  const schema = (await db.storeSchema()).name;
  const client = await db.openSession(
    `gex ${name} pid ${process.pid} on ${os.hostname()}`.slice(0, 63),
    () => undefined,
  );
  try {
    const { rows } = await client.query<{ ok: boolean }>(
      `SELECT pg_try_advisory_lock(hashtext('gex.singleton:' || $1::text), hashtext($2::text)) AS ok`,
      [name, schema],
    );
    if (rows[0]?.ok === true) return () => client.end().catch(() => undefined);
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  await client.end().catch(() => undefined);
  return undefined;
}
