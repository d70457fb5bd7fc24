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
export function upsertSql<R>(
  table: Table<R>,
  conflict: readonly string[],
  update: readonly string[] | 'nothing' = otherColumns(table, conflict),
): string {
  return `${insertSql(table)} ${onConflict(conflict, update)}`;
}

const otherColumns = <R>(table: Table<R>, conflict: readonly string[]): string[] =>
  names(table).filter((n) => !conflict.includes(n));

function onConflict(conflict: readonly string[], update: readonly string[] | 'nothing'): string {
  const action =
    update === 'nothing' ? 'DO NOTHING' : `DO UPDATE SET ${update.map((n) => `${n} = excluded.${n}`).join(', ')}`;
  return `ON CONFLICT (${conflict.join(', ')}) ${action}`;
}

/** Parameters of one multi-record statement: below SQLite's limit (32,766) and PostgreSQL's (65,535). */
const MAX_PARAMETERS = 30_000;
/** Text of one multi-record statement's parameters: far below PostgreSQL's 1 GB message limit. */
const MAX_TEXT_BYTES = 16 * 1024 * 1024;

/**
 * Many records as few `INSERT … VALUES (…), (…), …` statements (one round trip each instead of
 * one per record); with `conflict`, an upsert like `upsertSql`'s that overwrites every other column.
 * Yields each statement and its parameters. Statements hold a power of two of records, so a table
 * has a dozen statement texts at most (each is prepared and cached), whatever the counts inserted.
 */
export function* insertBatches<R>(
  table: Table<R>,
  records: Iterable<R>,
  conflict?: readonly string[],
): Generator<[string, SqlParam[]]> {
  const row = `(${table.columns.map(() => '?').join(', ')})`;
  const head = `INSERT INTO ${table.name} (${names(table).join(', ')}) VALUES `;
  const tail = conflict ? ` ${onConflict(conflict, otherColumns(table, conflict))}` : '';
  const statement = (count: number) => `${head}${Array.from({ length: count }, () => row).join(', ')}${tail}`;
  const capacity = 2 ** Math.floor(Math.log2(Math.max(1, Math.floor(MAX_PARAMETERS / table.columns.length))));
  let pending: SqlParam[][] = [];
  let bytes = 0;
  function* flush(): Generator<[string, SqlParam[]]> {
    while (pending.length > 0) {
      const count = 2 ** Math.floor(Math.log2(pending.length));
      yield [statement(count), pending.slice(0, count).flat()];
      pending = pending.slice(count);
    }
    bytes = 0;
  }
  for (const record of records) {
    const values = insertValues(table, record);
    const size = values.reduce<number>((sum, v) => sum + (typeof v === 'string' ? v.length : 8), 0);
    if (pending.length > 0 && (pending.length === capacity || bytes + size > MAX_TEXT_BYTES)) yield* flush();
    pending.push(values);
    bytes += size;
  }
  yield* flush();
}

/** The parameters of `insertSql` / `upsertSql` for one record, in column order. */
export function insertValues<R>(table: Table<R>, record: R): SqlParam[] {
  return table.columns.map((c) => c.value(record));
}

/** `a = ? AND b = ?` for the given columns. */
export function whereEqual(columns: readonly string[]): string {
  return columns.map((n) => `${n} = ?`).join(' AND ');
}
