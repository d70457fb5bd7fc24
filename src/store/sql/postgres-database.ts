import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import PQueue from 'p-queue';
import pg from 'pg';
import { from as copyFromStdin } from 'pg-copy-streams';
import {
  DatabaseUnavailable,
  TextWithNul,
  UniqueViolation,
  type Database,
  type Dialect,
  type SqlExecutor,
  type SqlParam,
  type TransactionExecutor,
  type TransactionOptions,
} from './database.js';
import { numberPlaceholders } from './placeholders.js';
import { isRetryableConflict, isUnavailable, isUniqueViolation, unavailableReason } from './postgres-errors.js';
import { chooseStoreSchema, withSearchPath, type StoreSchema } from './store-schema.js';

const DIALECT: Dialect = {
  name: 'postgres',
  forUpdate: ' FOR UPDATE',
  byteOrder: ' COLLATE "C"',
  // one lock per store schema, so stores in different schemas of one database migrate independently;
  // keyed on the search_path every connection sets (the schema itself may not exist yet)
  migrationLock: `SELECT pg_advisory_xact_lock(hashtext('gex.migrations:' || current_setting('search_path')))`,
  jsonArrayValues: (json, type) =>
    type === 'integer'
      ? `SELECT CAST(value AS BIGINT) AS value FROM json_array_elements_text(CAST(${json} AS json)) AS e(value)`
      : `SELECT value FROM json_array_elements_text(CAST(${json} AS json)) AS e(value)`,
};

export interface PostgresOptions {
  /** connections per process (default 10) */
  poolSize?: number;
  /** longest wait for a connection, free in the pool or new (default 10 000 ms) */
  connectTimeoutMs?: number;
  /** longest run of one statement, lock waits included (default 30 000 ms) */
  statementTimeoutMs?: number;
  /** an idle connection is closed after this (default 30 000 ms) */
  idleTimeoutMs?: number;
  /** a transaction left open this long by a vanished client is ended by the server (default 60 000 ms) */
  idleInTransactionTimeoutMs?: number;
  /** how the database is named in errors (never with a password) */
  label?: string;
}

export const POSTGRES_DEFAULTS = {
  poolSize: 10,
  connectTimeoutMs: 10_000,
  statementTimeoutMs: 30_000,
  idleTimeoutMs: 30_000,
  idleInTransactionTimeoutMs: 60_000,
} as const;

/** Attempts of a transaction the database aborts for a deadlock or a serialization failure. */
const MAX_ATTEMPTS = 5;

/** BIGINT arrives as text (it may exceed 2^53); the store's ids and counters are far below that. */
function parseBigint(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`BIGINT ${text} is beyond JavaScript's safe integers`);
  return n;
}

const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8
      ? parseBigint
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * PostgreSQL through node-postgres: a pool of connections, each transaction on one pooled client.
 * Errors come out as the store knows them: UniqueViolation, DatabaseUnavailable (refused, lost
 * or timed-out connections), anything else unchanged. A transaction aborted for a deadlock or a
 * serialization failure is run again, since nothing of it was committed.
 */
export class PostgresDatabase implements Database {
  readonly dialect = DIALECT;
  private readonly label: string;
  private readonly statementTimeoutMs: number;
  private readonly sqlCache = new Map<string, string>();
  /** the pool, made once the store's schema is known (its connections' search_path) */
  private pool: pg.Pool | null = null;
  private schema: Promise<StoreSchema> | null = null;
  private readonly settings: Required<Omit<PostgresOptions, 'label'>>;
  /** large writes run at once: at most half the pool, so other requests always find a connection */
  private readonly largeWrites: PQueue;

  constructor(
    /** the URL the store was opened with (a session of its own, or an engine sharing the database, connects with it) */
    readonly connectionString: string,
    options: PostgresOptions = {},
  ) {
    this.settings = { ...POSTGRES_DEFAULTS, ...options };
    this.label = options.label ?? 'PostgreSQL';
    this.statementTimeoutMs = this.settings.statementTimeoutMs;
    this.largeWrites = new PQueue({ concurrency: Math.max(1, Math.floor(this.settings.poolSize / 2)) });
  }

  get poolSize(): number {
    return this.settings.poolSize;
  }

  /**
   * The schema of the store's own tables (store-schema.ts), found on first use from what the
   * URL's own session selects (one short connection). The pool is made then: every connection of
   * it has that schema alone as its search_path (set at connection start), so the store's
   * statements name their tables unqualified and never reach `public`.
   */
  storeSchema(): Promise<StoreSchema> {
    this.schema ??= this.findStoreSchema().catch((error: unknown) => {
      this.schema = null; // tried again by the next call (the database may be back)
      throw error;
    });
    return this.schema;
  }

  /**
   * A connection of its own, outside the pool, with the store's connection settings: for what
   * lives as long as a session (a run's advisory lock). `onError` is told when it breaks.
   */
  async openSession(applicationName: string, onError: (error: Error) => void): Promise<pg.Client> {
    const o = this.settings;
    const client = new pg.Client({
      connectionString: this.connectionString,
      connectionTimeoutMillis: o.connectTimeoutMs,
      statement_timeout: o.statementTimeoutMs,
      application_name: applicationName,
      keepAlive: true,
    });
    client.on('error', onError);
    await client.connect();
    return client;
  }

  private async findStoreSchema(): Promise<StoreSchema> {
    const o = this.settings;
    const probe = new pg.Client({
      connectionString: this.connectionString,
      connectionTimeoutMillis: o.connectTimeoutMs,
      statement_timeout: o.statementTimeoutMs,
      application_name: 'gex',
    });
    probe.on('error', () => undefined);
    let schema: StoreSchema;
    try {
      await probe.connect();
      const { rows } = await probe.query<{ current: string | null; path: string }>(
        "SELECT current_schema() AS current, current_setting('search_path') AS path",
      );
      schema = chooseStoreSchema(rows[0].current, rows[0].path);
    } catch (e) {
      throw this.translate(e);
    } finally {
      await probe.end().catch(() => undefined);
    }
    this.pool ??= this.createPool(withSearchPath(this.connectionString, schema.name, process.env.PGOPTIONS));
    return schema;
  }

  private createPool(connectionString: string): pg.Pool {
    const o = this.settings;
    const pool = new pg.Pool({
      connectionString,
      max: o.poolSize,
      connectionTimeoutMillis: o.connectTimeoutMs,
      idleTimeoutMillis: o.idleTimeoutMs,
      statement_timeout: o.statementTimeoutMs,
      idle_in_transaction_session_timeout: o.idleInTransactionTimeoutMs,
      application_name: 'gex',
      keepAlive: true,
      types: TYPES,
    });
    // Without these listeners a connection dropped by the server (restart, outage) would crash the
    // process. The pool discards such a connection; the next request opens a new one or gets a 503.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
    return pool;
  }

  /** The pool, once the schema is known. */
  private async ready(): Promise<pg.Pool> {
    await this.storeSchema();
    return this.pool!;
  }

  private sql(text: string): string {
    let translated = this.sqlCache.get(text);
    if (translated === undefined) {
      translated = numberPlaceholders(text);
      this.sqlCache.set(text, translated);
    }
    return translated;
  }

  private translate(error: unknown, committing = false): unknown {
    if (error instanceof DatabaseUnavailable || error instanceof UniqueViolation) return error;
    if (isUniqueViolation(error)) return new UniqueViolation((error as Error).message);
    if (isUnavailable(error)) return new DatabaseUnavailable(unavailableReason(error), this.label, committing);
    return error;
  }

  private async query(on: pg.Pool | pg.PoolClient, sql: string, params: SqlParam[] = []): Promise<pg.QueryResult> {
    if (params.some((p) => typeof p === 'string' && p.includes('\0'))) throw new TextWithNul();
    try {
      return await on.query(
        this.sql(sql),
        params.map((p) => (typeof p === 'bigint' ? p.toString() : p)),
      );
    } catch (e) {
      throw this.translate(e);
    }
  }

  private executor(on: pg.Pool | pg.PoolClient): SqlExecutor {
    return {
      all: async <T>(sql: string, params?: SqlParam[]) => (await this.query(on, sql, params)).rows as T[],
      get: async <T>(sql: string, params?: SqlParam[]) => (await this.query(on, sql, params)).rows[0] as T | undefined,
      run: async (sql: string, params?: SqlParam[]) => ({ changes: (await this.query(on, sql, params)).rowCount ?? 0 }),
    };
  }

  /** The executor of a transaction on `client`: statements, and COPY through the same connection. */
  private transactionExecutor(client: pg.PoolClient): TransactionExecutor {
    const executor = this.executor(client);
    return {
      ...executor,
      runEach: async (sql: string, paramLists: readonly SqlParam[][]) => {
        let changes = 0;
        for (const params of paramLists) changes += (await executor.run(sql, params)).changes;
        return { changes };
      },
      copyFrom: async (sql: string, data: AsyncIterable<string>) => {
        const copy = client.query(copyFromStdin(sql));
        try {
          // an error of `data` (a bad CSV line) ends the COPY with CopyFail: the connection stays usable for ROLLBACK
          await pipeline(Readable.from(data, { objectMode: false }), copy);
        } catch (e) {
          throw this.translate(e);
        }
        return copy.rowCount;
      },
    };
  }

  async all<T>(sql: string, params?: SqlParam[]): Promise<T[]> {
    return this.executor(await this.ready()).all<T>(sql, params);
  }

  async get<T>(sql: string, params?: SqlParam[]): Promise<T | undefined> {
    return this.executor(await this.ready()).get<T>(sql, params);
  }

  async run(sql: string, params?: SqlParam[]): Promise<{ changes: number }> {
    return this.executor(await this.ready()).run(sql, params);
  }

  /**
   * As `run` (node-postgres sends the bytes without blocking), on at most half the pool's
   * connections at once: 200 uploads' chunks never leave a health check or a configuration read
   * waiting for a connection.
   */
  runLarge(sql: string, params?: SqlParam[]): Promise<{ changes: number }> {
    return this.largeWrites.add(() => this.run(sql, params));
  }

  async transaction<T>(work: (tx: TransactionExecutor) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const pool = await this.ready();
    for (let attempt = 1; ; attempt++) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (e) {
        throw this.translate(e);
      }
      let broken: Error | undefined;
      let committing = false;
      try {
        await client.query(options.readOnly ? 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' : 'BEGIN');
        // a bulk load's one COPY of a whole file may take minutes; a wait for a lock may not
        if (options.bulk)
          await client.query(
            `SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = ${Math.trunc(this.statementTimeoutMs)}`,
          );
        const result = await work(this.transactionExecutor(client));
        committing = !options.readOnly;
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // a lost or timed-out connection is dropped from the pool rather than reused
        if (error instanceof DatabaseUnavailable || isUnavailable(error)) broken = error as Error;
        else await client.query('ROLLBACK').catch((e: Error) => (broken = e));
        if (isRetryableConflict(error) && attempt < MAX_ATTEMPTS) continue;
        throw this.translate(error, committing);
      } finally {
        client.release(broken);
      }
    }
  }

  async changeMarker(): Promise<null> {
    return null;
  }

  async close(): Promise<void> {
    await this.schema?.catch(() => undefined);
    await this.pool?.end();
  }
}
