import os from 'node:os';
import type pg from 'pg';
import type { PostgresDatabase } from '../sql/postgres-database.js';
import type { ConfigurationLock, ConfigurationLockRequest, RunLockAdapter } from './run-lock-adapter.js';

/**
 * The lock key: a 64-bit hash of the store's schema, project, component and configuration, so
 * stores in different schemas of one database lock independently.
 */
const KEY_SQL = `hashtextextended('gex.run:' || coalesce(current_schema(), '') || ':' || $1::text, 0)`;

/**
 * A run lock on a configuration of a PostgreSQL store: a session-level advisory lock held on a
 * connection of its own for the whole run. The server releases it when that session ends — at
 * release, at exit, and when the process dies (kill -9 closes the socket) — so nothing is left
 * behind and no table is needed. The holder is found in pg_locks/pg_stat_activity, named by the
 * application_name this connection sets.
 */
export class PostgresRunLock {
  private client: pg.Client | null = null;

  constructor(
    /** the store's database, which opens the lock's own session */
    private readonly db: PostgresDatabase,
    /** project, component and configuration ids, joined */
    private readonly key: string,
    /** told when the lock's session breaks (the lock is gone with it) */
    private readonly onLost: (error: Error) => void = () => undefined,
  ) {}

  /** One attempt: true when taken, else a description of the holder. */
  async tryAcquire(): Promise<true | string> {
    const client = await this.connect();
    const taken = await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(${KEY_SQL}) AS ok`, [this.key]);
    if (taken.rows[0]?.ok) return true;
    return this.describeHolder(client);
  }

  async release(): Promise<void> {
    const client = this.client;
    this.client = null;
    // ending the session releases every advisory lock it holds
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<pg.Client> {
    if (this.client) return this.client;
    // seen by the run that finds the lock taken (63 bytes at most)
    const name = `gex run pid ${process.pid} on ${os.hostname()}`.slice(0, 63);
    // a dropped connection must not crash the run; the run goes on without the lock, and says so
    const opened: { client?: pg.Client } = {};
    const client = await this.db.openSession(name, (error) => {
      if (opened.client !== undefined && this.client === opened.client) this.onLost(error);
    });
    opened.client = client;
    this.client = client;
    return client;
  }

  private async describeHolder(client: pg.Client): Promise<string> {
    const result = await client.query<{ application_name: string; backend_start: Date; client_addr: string | null }>(
      `WITH k AS (SELECT ${KEY_SQL} AS key)
       SELECT a.application_name, a.backend_start, host(a.client_addr) AS client_addr
       FROM k, pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
         AND l.classid::bigint = ((k.key >> 32) & 4294967295) AND l.objid::bigint = (k.key & 4294967295)
       LIMIT 1`,
      [this.key],
    );
    const row = result.rows[0];
    if (!row) return 'another session (it ended just now)';
    const name = row.application_name
      ? `"${row.application_name.replace(/[\u0000-\u001f\u007f]/g, '?')}"`
      : 'a session';
    return `${name}${row.client_addr ? ` from ${row.client_addr}` : ''} since ${row.backend_start.toISOString()}`;
  }
}

/** The run locks of a PostgreSQL store: a session advisory lock per configuration (PostgresRunLock). */
export class PostgresRunLocks implements RunLockAdapter {
  constructor(
    private readonly db: PostgresDatabase,
    private readonly projectId: number,
  ) {}

  configurationLock({ componentId, configId, onLost }: ConfigurationLockRequest): ConfigurationLock {
    const lock = new PostgresRunLock(this.db, `${this.projectId}\n${componentId}\n${configId}`, onLost);
    return { tryAcquire: () => lock.tryAcquire(), release: () => lock.release() };
  }
}
