import { sentence } from '../../common/text.js';
import { StoreError } from '../store-error.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/**
 * The little SQL surface the store needs, identical for SQLite and PostgreSQL: statements are
 * written once with `?` placeholders; each adapter translates and runs them. Dialect differences
 * live in the adapters and in `Dialect` (row locks, collation, the migration lock), not in the
 * store's queries.
 */
/** `Buffer`: bytes (SQLite BLOB, PostgreSQL BYTEA), as File Storage keeps a file's chunks. */
export type SqlParam = string | number | bigint | Buffer | null;

export interface SqlExecutor {
  all<T = Record<string, unknown>>(sql: string, params?: SqlParam[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, params?: SqlParam[]): Promise<T | undefined>;
  run(sql: string, params?: SqlParam[]): Promise<{ changes: number }>;
}

/** What a transaction's work runs on: statements, and the bulk paths of a load. */
export interface TransactionExecutor extends SqlExecutor {
  /**
   * Runs one statement once per parameter list, in order, prepared once (the rows of a bulk
   * insert); returns the rows changed in all.
   */
  runEach(sql: string, paramLists: readonly SqlParam[][]): Promise<{ changes: number }>;
  /**
   * The database's own bulk path where it has one — PostgreSQL's `COPY … FROM STDIN`, absent on
   * SQLite (its prepared statements are already the fastest way in): runs the COPY statement
   * `sql` fed with `data` (chunks of text in the format the statement names) and returns the rows
   * copied.
   */
  copyFrom?(sql: string, data: AsyncIterable<string>): Promise<number>;
}

export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** appended to a SELECT that must lock the rows it reads until the transaction ends */
  readonly forUpdate: string;
  /** appended to a text column in ORDER BY: byte order, as SQLite's BINARY collation sorts */
  readonly byteOrder: string;
  /**
   * A statement that takes a transaction-scoped lock serialising schema migrations across
   * processes; null where the transaction itself already excludes other writers (SQLite).
   */
  readonly migrationLock: string | null;
  /**
   * A subquery of the elements of `json` (an expression: a column, or `?` bound to the text of a
   * JSON array), one row each in a column `value` — text, or BIGINT for `integer`.
   */
  jsonArrayValues(json: string, type: 'text' | 'integer'): string;
}

export interface TransactionOptions {
  /** a consistent snapshot that writes nothing (PostgreSQL: REPEATABLE READ READ ONLY) */
  readOnly?: boolean;
  /**
   * A bulk load whose statements (one COPY of a whole file) may run longer than the statement
   * timeout; lock waits stay bounded by it (PostgreSQL; SQLite has no statement timeout).
   */
  bulk?: boolean;
}

/**
 * Where a PostgreSQL store keeps its own tables (projects, tokens, configurations, the Storage
 * metadata, schema_migrations, …): a schema of its own, never `public` beside other data. Bucket
 * schemas (`"in.c-shop"`) are separate and stay where they are.
 */
export interface StoreSchema {
  /** the schema of gex's own tables: every connection's search_path */
  readonly name: string;
  /**
   * Where gex before this layout kept them: the schema the connection URL alone selects
   * (`current_schema()`, usually `public`); null when it selects none.
   */
  readonly legacy: string | null;
}

export interface Database extends SqlExecutor {
  readonly dialect: Dialect;
  /**
   * Runs `work` in one transaction; concurrent writers are serialised by the database. `work` may
   * run more than once (PostgreSQL retries a transaction the database aborted for a deadlock),
   * so it must have no effects outside the transaction.
   */
  transaction<T>(work: (tx: TransactionExecutor) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * One autocommit write of large values (a file's megabyte chunk) where its I/O cannot hold the
   * event loop: SQLite runs it on a worker thread's connection, after the other queued statements;
   * PostgreSQL as `run` (its client never blocks) on at most half of its pool.
   */
  runLarge(sql: string, params?: SqlParam[]): Promise<{ changes: number }>;
  /**
   * A value that differs after any change committed since it was last read, by this process or any
   * other; null where that cannot be known cheaply (PostgreSQL: other servers commit without notice).
   * Lets readers reuse what they derived from unchanged data.
   */
  changeMarker(): Promise<string | null>;
  /**
   * PostgreSQL: the schema of the store's own tables (every connection's search_path) and where
   * an older gex kept them; absent on SQLite, whose file is the store's alone.
   */
  storeSchema?(): Promise<StoreSchema>;
  /** PostgreSQL: the most connections this process opens at once (its pool); absent on SQLite. */
  readonly poolSize?: number;
  /**
   * SQLite: a connection of its own to the same file, for long work (a Storage job's load) that
   * must not hold this connection's queue — other requests keep being answered meanwhile (WAL
   * reads are never blocked; writers wait for the lock). Absent on PostgreSQL, whose pool already
   * gives each transaction its own connection. The caller closes it.
   */
  separateConnection?(): Database;
  close(): Promise<void>;
}

/**
 * A statement's text parameter holds NUL, which PostgreSQL's text cannot: refused before it is
 * sent (the database would fail the statement), as a 400 / user error rather than a crash.
 * Nothing was changed. Callers that know what a NUL means (a filter's values) handle it first.
 */
export class TextWithNul extends StoreError {
  constructor() {
    super(
      KEBOOLA_ERRORS.validation.status,
      KEBOOLA_ERRORS.validation.code,
      "A value contains a NUL character (byte 0), which the store's database cannot hold; remove it and try again.",
    );
    this.name = 'TextWithNul';
  }
}

/** Thrown by adapters for a unique-key violation, so the store can map it to "already exists". */
export class UniqueViolation extends Error {}

/**
 * The database cannot be reached or used right now (refused, timed out, restarting, no free
 * connection). The server answers it with 503; the CLI prints it and exits 1. Nothing was changed
 * — unless the connection broke during COMMIT, when nobody can know (`committing`).
 */
export class DatabaseUnavailable extends StoreError {
  constructor(reason: string, location: string, committing = false) {
    const outcome = committing
      ? 'The connection broke while the change was being committed: it may or may not have been saved; check before retrying.'
      : 'Nothing was changed; retry when the database is reachable again.';
    super(
      KEBOOLA_ERRORS.databaseUnavailable.status,
      KEBOOLA_ERRORS.databaseUnavailable.code,
      `Storage database unavailable (${location}): ${sentence(reason)} ${outcome}`,
    );
    this.name = 'DatabaseUnavailable';
  }
}
