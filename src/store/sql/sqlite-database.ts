import { setImmediate as nextTurn } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import PQueue from 'p-queue';
import {
  DatabaseUnavailable,
  UniqueViolation,
  type Database,
  type Dialect,
  type SqlParam,
  type TransactionExecutor,
  type TransactionOptions,
} from './database.js';
import { DEFAULT_DURABILITY, type SqliteDurability } from './sqlite-settings.js';
import { SqliteWriteThread } from './sqlite-write-thread.js';
import { StatementCache } from './statement-cache.js';

// BEGIN IMMEDIATE already excludes every other writer, so neither row locks nor a migration lock are needed
const DIALECT: Dialect = {
  name: 'sqlite',
  forUpdate: '',
  byteOrder: '',
  migrationLock: null,
  // JSON strings come out as text, JSON integers as integers
  jsonArrayValues: (json) => `SELECT value FROM json_each(${json})`,
};

/** Waiting for a lock held by another process: an async retry loop, never a blocking wait. */
export interface BusyRetryOptions {
  /** give up after this long (default 10 s) with DatabaseUnavailable (HTTP 503) */
  maxWaitMs?: number;
  /** the clock the bound is measured on (tests inject one) */
  now?: () => number;
  /** waits between attempts (tests inject one) */
  sleep?: (ms: number) => Promise<void>;
}

export interface SqliteOptions {
  /** `synchronous` pragma (default full: an acknowledged write survives an OS crash) */
  durability?: SqliteDurability;
  busy?: BusyRetryOptions;
  /** the write thread of the connection this one was separated from: one thread per file and process */
  writeThread?: SqliteWriteThread;
  /** how long queued operations run one after another before the event loop gets a turn (default 10 ms) */
  sliceMs?: number;
}

const DEFAULT_MAX_BUSY_WAIT_MS = 10_000;
const FIRST_RETRY_DELAY_MS = 2;
const LONGEST_RETRY_DELAY_MS = 100;
/**
 * Longest the queue runs operations one after another before the event loop gets a turn: p-queue
 * starts the next operation in a microtask, so without a turn a queue of 200 writes (each a
 * commit's fsync) would run back to back while no request is read and no timer fires.
 */
const DEFAULT_SLICE_MS = 10;
/** Large writes (runLarge: a file's chunks) wait for every other queued operation: a chunk may take a while. */
const LARGE_WRITE_PRIORITY = -1;

/** What an attempt returns when another process holds the lock it needs. */
const BUSY = Symbol('busy');

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'));
}

/**
 * SQLite through better-sqlite3 (synchronous, one connection). Every operation runs in a queue of
 * one, so a transaction of one request never interleaves with another request's statements on the
 * shared connection; other processes are kept out by `BEGIN IMMEDIATE`.
 *
 * better-sqlite3 blocks the event loop while SQLite waits for a lock, so the busy timeout is zero:
 * an operation that finds the database locked by another process leaves the queue, waits
 * asynchronously (backoff) and tries again, while other requests go on (WAL reads never wait for
 * a writer). After `maxWaitMs` it fails with DatabaseUnavailable. Queued operations give the event
 * loop a turn every 10 ms, and large writes run on a worker thread (runLarge), so neither a
 * queue of small commits nor one large one holds the loop for long.
 */
export class SqliteDatabase implements Database {
  readonly dialect = DIALECT;
  private readonly db: BetterSqlite3.Database;
  private readonly queue = new PQueue({ concurrency: 1 });
  private readonly statements = new StatementCache<BetterSqlite3.Statement>((sql) => this.db.prepare(sql));
  private readonly executor: TransactionExecutor;
  /** writes through this connection: `PRAGMA data_version` only counts other connections' commits */
  private localWrites = 0;
  /** when the queue's current run of operations without a turn of the event loop began */
  private sliceStarted: number | undefined;
  private readonly writeThread: SqliteWriteThread;
  /** whether this connection made the write thread (and closes it) or shares its parent's */
  private readonly ownsWriteThread: boolean;

  private readonly maxBusyWaitMs: number;
  private readonly sliceMs: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly file: string,
    private readonly options: SqliteOptions = {},
  ) {
    this.maxBusyWaitMs = options.busy?.maxWaitMs ?? DEFAULT_MAX_BUSY_WAIT_MS;
    this.sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS;
    this.now = options.busy?.now ?? Date.now;
    this.sleep = options.busy?.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.db = new BetterSqlite3(file);
    // opening may wait (once, synchronously) for another process that is creating the file or
    // switching it to WAL; after that no statement ever blocks: locked ones are retried async
    this.db.pragma(`busy_timeout = ${this.maxBusyWaitMs}`);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 0');
    this.db.pragma('foreign_keys = ON');
    const synchronous = (options.durability ?? DEFAULT_DURABILITY).toUpperCase();
    this.db.pragma(`synchronous = ${synchronous}`);
    this.ownsWriteThread = options.writeThread === undefined;
    this.writeThread = options.writeThread ?? new SqliteWriteThread({ file, synchronous });
    this.executor = {
      all: async <T>(sql: string, params: SqlParam[] = []) => this.statement(sql).all(...params) as T[],
      get: async <T>(sql: string, params: SqlParam[] = []) => this.statement(sql).get(...params) as T | undefined,
      run: async (sql: string, params: SqlParam[] = []) => {
        this.localWrites++;
        return { changes: this.wrap(() => this.statement(sql).run(...params)).changes };
      },
      runEach: async (sql: string, paramLists: readonly SqlParam[][]) => {
        this.localWrites++;
        const statement = this.statement(sql);
        // one synchronous loop: no promise per row, as fast as SQLite's own prepared-insert loop
        return this.wrap(() => {
          let changes = 0;
          for (const params of paramLists) changes += statement.run(params).changes;
          return { changes };
        });
      },
    };
  }

  private statement(sql: string): BetterSqlite3.Statement {
    return this.statements.get(sql);
  }

  private wrap<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      throw translated(e);
    }
  }

  /**
   * Called by each queued operation before it starts: past `sliceMs` since the event loop last
   * turned, waits for a turn (other requests are read, timers fire) before going on.
   */
  private async turn(): Promise<void> {
    const now = performance.now();
    if (this.sliceStarted !== undefined && now - this.sliceStarted < this.sliceMs) return;
    if (this.sliceStarted !== undefined) await nextTurn();
    this.sliceStarted = performance.now();
    // the next turn of the loop starts a new slice
    setImmediate(() => (this.sliceStarted = undefined));
  }

  /**
   * Runs `attempt` in the queue until it does not find the database locked: between attempts the
   * queue is free for other operations. An attempt that returns BUSY has changed nothing.
   */
  private async whenUnlocked<T>(attempt: () => Promise<T | typeof BUSY>, priority = 0): Promise<T> {
    const started = this.now();
    let delay = FIRST_RETRY_DELAY_MS;
    for (;;) {
      const result = await this.queue.add(
        async () => {
          await this.turn();
          return attempt();
        },
        { priority },
      );
      if (result !== BUSY) return result;
      const waited = this.now() - started;
      if (waited >= this.maxBusyWaitMs) {
        throw new DatabaseUnavailable(
          `another process has held the database locked for ${Math.round(waited / 1000)} s`,
          this.file,
        );
      }
      await this.sleep(Math.min(delay, this.maxBusyWaitMs - waited));
      delay = Math.min(delay * 2, LONGEST_RETRY_DELAY_MS);
    }
  }

  /** One autocommit statement: it either ran or, locked out, did nothing. */
  private statementWhenUnlocked<T>(run: () => Promise<T>, priority?: number): Promise<T> {
    return this.whenUnlocked(async () => {
      try {
        return await run();
      } catch (e) {
        if (isBusy(e)) return BUSY;
        throw e;
      }
    }, priority);
  }

  all<T>(sql: string, params?: SqlParam[]): Promise<T[]> {
    return this.statementWhenUnlocked(() => this.executor.all<T>(sql, params));
  }

  get<T>(sql: string, params?: SqlParam[]): Promise<T | undefined> {
    return this.statementWhenUnlocked(() => this.executor.get<T>(sql, params));
  }

  run(sql: string, params?: SqlParam[]): Promise<{ changes: number }> {
    return this.statementWhenUnlocked(() => this.executor.run(sql, params));
  }

  /**
   * One autocommit write of large values (a file's chunk) on the write thread's connection, in its
   * turn among this connection's operations (after every other one queued): the event loop goes on
   * while SQLite writes the pages, fsyncs the commit and checkpoints the WAL.
   */
  runLarge(sql: string, params: SqlParam[] = []): Promise<{ changes: number }> {
    return this.statementWhenUnlocked(async () => {
      this.localWrites++;
      try {
        return await this.writeThread.run(sql, params);
      } catch (e) {
        throw translated(e);
      }
    }, LARGE_WRITE_PRIORITY);
  }

  /** A transaction that finds the database locked (at BEGIN, inside, at COMMIT) is rolled back and run again. */
  transaction<T>(work: (tx: TransactionExecutor) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    return this.whenUnlocked(async () => {
      try {
        // a deferred transaction reads a WAL snapshot without taking the write lock
        this.db.exec(options.readOnly ? 'BEGIN' : 'BEGIN IMMEDIATE');
        const result = await work(this.executor);
        this.db.exec('COMMIT');
        return result;
      } catch (e) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        if (isBusy(e)) return BUSY;
        throw e;
      }
    });
  }

  /** Runs a multi-statement script (not retried: a script may have run in part). */
  exec(sql: string): Promise<void> {
    return this.queue.add(async () => {
      await this.turn();
      this.localWrites++;
      this.db.exec(sql);
    });
  }

  /** Another connection to the file, sharing this one's write thread. */
  separateConnection(): SqliteDatabase {
    return new SqliteDatabase(this.file, { ...this.options, writeThread: this.writeThread });
  }

  async changeMarker(): Promise<string> {
    // Read at once, not in the queue: a reader builds from data read after this, through the queue,
    // so its data is never older than the marker; a write still in progress has already counted
    // itself, and one that rolls back only costs a rebuild.
    return `${this.statement('PRAGMA data_version').pluck().get() as number}:${this.localWrites}`;
  }

  async close(): Promise<void> {
    await this.queue.onIdle();
    if (this.ownsWriteThread) await this.writeThread.close();
    this.db.close();
  }
}

/** SQLite's unique-key violations (of this connection or the write thread's) as UniqueViolation. */
function translated(e: unknown): unknown {
  const code = (e as { code?: string }).code;
  if (code?.startsWith('SQLITE_CONSTRAINT_PRIMARYKEY') || code === 'SQLITE_CONSTRAINT_UNIQUE')
    return new UniqueViolation((e as Error).message);
  return e;
}
