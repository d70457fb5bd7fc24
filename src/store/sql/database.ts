/**
 * The little SQL surface the store needs, identical for SQLite and PostgreSQL: statements are
 * written once with `?` placeholders; each adapter translates and runs them. Dialect differences
 * live in the adapters and in `Dialect` (e.g. row locks), not in the store's queries.
 */
export type SqlParam = string | number | bigint | null;

export interface SqlExecutor {
  all<T = Record<string, unknown>>(sql: string, params?: SqlParam[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, params?: SqlParam[]): Promise<T | undefined>;
  run(sql: string, params?: SqlParam[]): Promise<{ changes: number }>;
}

export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** appended to a SELECT that must lock the rows it reads until the transaction ends */
  readonly forUpdate: string;
}

export interface Database extends SqlExecutor {
  readonly dialect: Dialect;
  /** runs `work` in one transaction; concurrent writers are serialised by the database */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Thrown by adapters for a unique-key violation, so the store can map it to "already exists". */
export class UniqueViolation extends Error {}
