import BetterSqlite3 from 'better-sqlite3';
import PQueue from 'p-queue';
import { UniqueViolation, type Database, type Dialect, type SqlExecutor, type SqlParam, type TransactionOptions } from './database.js';

// BEGIN IMMEDIATE already excludes every other writer, so neither row locks nor a migration lock are needed
const DIALECT: Dialect = { name: 'sqlite', forUpdate: '', byteOrder: '', migrationLock: null };

/**
 * SQLite through better-sqlite3 (synchronous, one connection). Every operation runs in a queue of
 * one, so a transaction of one request never interleaves with another request's statements on the
 * shared connection; other processes are kept out by `BEGIN IMMEDIATE` and a busy timeout.
 */
export class SqliteDatabase implements Database {
  readonly dialect = DIALECT;
  private readonly db: BetterSqlite3.Database;
  private readonly queue = new PQueue({ concurrency: 1 });
  private readonly statements = new Map<string, BetterSqlite3.Statement>();
  private readonly executor: SqlExecutor;
  /** writes through this connection: `PRAGMA data_version` only counts other connections' commits */
  private localWrites = 0;

  constructor(file: string) {
    this.db = new BetterSqlite3(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 10000');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('synchronous = NORMAL');
    this.executor = {
      all: async <T>(sql: string, params: SqlParam[] = []) => this.statement(sql).all(...params) as T[],
      get: async <T>(sql: string, params: SqlParam[] = []) => this.statement(sql).get(...params) as T | undefined,
      run: async (sql: string, params: SqlParam[] = []) => {
        this.localWrites++;
        return { changes: this.wrap(() => this.statement(sql).run(...params)).changes };
      },
    };
  }

  private statement(sql: string): BetterSqlite3.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  private wrap<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      if ((e as { code?: string }).code?.startsWith('SQLITE_CONSTRAINT_PRIMARYKEY') || (e as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
        throw new UniqueViolation((e as Error).message);
      }
      throw e;
    }
  }

  all<T>(sql: string, params?: SqlParam[]): Promise<T[]> {
    return this.queue.add(() => this.executor.all<T>(sql, params));
  }

  get<T>(sql: string, params?: SqlParam[]): Promise<T | undefined> {
    return this.queue.add(() => this.executor.get<T>(sql, params));
  }

  run(sql: string, params?: SqlParam[]): Promise<{ changes: number }> {
    return this.queue.add(() => this.executor.run(sql, params));
  }

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    return this.queue.add(
      async () => {
        // a deferred transaction reads a WAL snapshot without taking the write lock
        this.db.exec(options.readOnly ? 'BEGIN' : 'BEGIN IMMEDIATE');
        try {
          const result = await work(this.executor);
          this.db.exec('COMMIT');
          return result;
        } catch (e) {
          if (this.db.inTransaction) this.db.exec('ROLLBACK');
          throw e;
        }
      },
    );
  }

  /** Runs a multi-statement script (migrations). */
  exec(sql: string): Promise<void> {
    return this.queue.add(() => {
      this.localWrites++;
      this.db.exec(sql);
    });
  }

  async changeMarker(): Promise<string> {
    // Read at once, not in the queue: a reader builds from data read after this, through the queue,
    // so its data is never older than the marker; a write still in progress has already counted
    // itself, and one that rolls back only costs a rebuild.
    return `${this.statement('PRAGMA data_version').pluck().get() as number}:${this.localWrites}`;
  }

  async close(): Promise<void> {
    await this.queue.onIdle();
    this.db.close();
  }
}
