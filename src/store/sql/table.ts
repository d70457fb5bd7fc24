import type { SqlParam } from './database.js';

/**
 * A table described once — its name and its columns, each with how a record's value is stored —
 * from which the INSERT, upsert and SELECT statements and their parameter lists are generated,
 * so that a column name and its value can never drift apart.
 */
export interface Column<R> {
  readonly name: string;
  readonly value: (record: R) => SqlParam;
}

export interface Table<R> {
  readonly name: string;
  readonly columns: ReadonlyArray<Column<R>>;
}

export function column<R>(name: string, value: (record: R) => SqlParam): Column<R> {
  return { name, value };
}

const names = <R>(table: Table<R>): string[] => table.columns.map((c) => c.name);

/** `SELECT <every column> FROM <table>`; callers append WHERE / ORDER BY. */
export function selectSql<R>(table: Table<R>): string {
  return `SELECT ${names(table).join(', ')} FROM ${table.name}`;
}

/** `INSERT INTO <table> (<columns>) VALUES (?, …)`; parameters from `insertValues`. */
export function insertSql<R>(table: Table<R>): string {
  const columns = names(table);
  return `INSERT INTO ${table.name} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`;
}

/**
 * An insert that, on a clash on `conflict`, either does nothing or overwrites `update`
 * (default: every column outside `conflict`) with the inserted values.
 */
export function upsertSql<R>(table: Table<R>, conflict: readonly string[], update: readonly string[] | 'nothing' = names(table).filter((n) => !conflict.includes(n))): string {
  const action = update === 'nothing' ? 'DO NOTHING' : `DO UPDATE SET ${update.map((n) => `${n} = excluded.${n}`).join(', ')}`;
  return `${insertSql(table)} ON CONFLICT (${conflict.join(', ')}) ${action}`;
}

/** The parameters of `insertSql` / `upsertSql` for one record, in column order. */
export function insertValues<R>(table: Table<R>, record: R): SqlParam[] {
  return table.columns.map((c) => c.value(record));
}

/** `a = ? AND b = ?` for the given columns. */
export function whereEqual(columns: readonly string[]): string {
  return columns.map((n) => `${n} = ?`).join(' AND ');
}
