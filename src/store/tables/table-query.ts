import { UserError } from '../../common/errors.js';
import { excerptId } from '../../common/log-text.js';
import type { Dialect, SqlExecutor, SqlParam } from '../sql/database.js';
import { qualifiedName, type CatalogTable } from './catalog.js';
import { storedMoment } from './moments.js';
import { quoteIdentifier, TIMESTAMP_COLUMN } from './physical-names.js';
import { tableIdText } from './table-id.js';

/**
 * What to read of a table — Keboola's export and data-preview options, and an input mapping's:
 * which columns, which rows (`whereColumn` with `whereOperator` `eq`/`ne` over `whereValues`;
 * rows changed since a moment) and how many.
 */
export interface TableQuery {
  /** the table's columns, in its order, when absent or empty */
  readonly columns?: readonly string[];
  readonly whereColumn?: string;
  readonly whereValues?: readonly string[];
  readonly whereOperator?: 'eq' | 'ne';
  /** rows whose `_timestamp` is at or after this moment */
  readonly changedSince?: Date;
  /** rows whose `_timestamp` is before this moment */
  readonly changedUntil?: Date;
  /** most rows returned; all when absent */
  readonly limit?: number;
}

/** Most values a where filter may list (each is a statement parameter). */
export const MAX_WHERE_VALUES = 10_000;

/** The SQL parts of a query over one table, and the columns it returns (user names, in order). */
export interface CompiledQuery {
  readonly columns: string[];
  /** `"c0" AS c0, …` */
  readonly selectList: string;
  readonly from: string;
  /** conditions joined by AND; their parameters in order */
  readonly conditions: string[];
  readonly params: SqlParam[];
}

/**
 * The values of a filter a table's cell can equal: a value with NUL cannot be one (loads refuse
 * NUL on both databases; PostgreSQL's text cannot hold it, so it must not reach a statement
 * either), so it matches no row — under `eq` it selects nothing, under `ne` it excludes nothing.
 */
export function comparableValues(values: readonly string[]): string[] {
  return values.filter((v) => !v.includes('\0'));
}

/** A condition no row meets, in SQL both databases accept. */
export const NO_ROW = '1 = 0';

/**
 * Compiles `query` against `table`. User names reach the SQL only as the table's physical column
 * names, looked up in the metadata; values only as parameters.
 */
export function compileQuery(
  table: CatalogTable,
  query: TableQuery,
  dialect: Pick<Dialect, 'byteOrder'>,
): CompiledQuery {
  const byName = new Map(table.columns.map((c) => [c.name, c.physical]));
  const physical = (name: string, role: string): string => {
    const column = byName.get(name);
    if (column === undefined)
      throw new UserError(
        'GEX_TABLE_REQUEST_INVALID',
        `Table ${excerptId(tableIdText(table.id))} has no column ${excerptId(name)} (${role}).`,
      );
    return quoteIdentifier(column);
  };
  const columns = query.columns && query.columns.length > 0 ? [...query.columns] : table.columns.map((c) => c.name);
  if (new Set(columns).size !== columns.length)
    throw new UserError('GEX_TABLE_REQUEST_INVALID', 'The columns to read name a column twice.');
  const selected = columns.map((name, i) => `${physical(name, 'columns')} AS c${i}`);
  const conditions: string[] = [];
  const params: SqlParam[] = [];
  if (query.whereColumn !== undefined && query.whereColumn !== '') {
    const values = query.whereValues ?? [];
    if (values.length === 0)
      throw new UserError(
        'GEX_TABLE_REQUEST_INVALID',
        `A filter on column ${excerptId(query.whereColumn)} needs at least one value (whereValues).`,
      );
    if (values.length > MAX_WHERE_VALUES)
      throw new UserError(
        'GEX_TABLE_REQUEST_INVALID',
        `A filter may list at most ${MAX_WHERE_VALUES} values; it lists ${values.length}.`,
      );
    const column = physical(query.whereColumn, 'whereColumn');
    const comparable = comparableValues(values);
    if (comparable.length > 0) {
      conditions.push(
        `${column} ${query.whereOperator === 'ne' ? 'NOT IN' : 'IN'} (${comparable.map(() => '?').join(', ')})`,
      );
      params.push(...comparable);
    } else if (query.whereOperator !== 'ne') conditions.push(NO_ROW);
  } else if (query.whereValues && query.whereValues.length > 0) {
    throw new UserError(
      'GEX_TABLE_REQUEST_INVALID',
      'whereValues were given without whereColumn: name the column to filter on.',
    );
  }
  // byte order: the text of `_timestamp` sorts as its moment whatever the database's collation
  const changed = `${quoteIdentifier(TIMESTAMP_COLUMN)}${dialect.byteOrder}`;
  for (const [moment, operator] of [
    [query.changedSince, '>='],
    [query.changedUntil, '<'],
  ] as const) {
    if (moment === undefined) continue;
    const at = storedMoment(moment);
    if ('text' in at) {
      conditions.push(`${changed} ${operator} ?`);
      params.push(at.text);
    } else if ((at.beyond === 'after') === (operator === '>=')) {
      // since a moment after every row, or until one before every row
      conditions.push(NO_ROW);
    }
  }
  return { columns, selectList: selected.join(', '), from: qualifiedName(table), conditions, params };
}

type Row = Record<string, unknown>;

/**
 * Reads a compiled query's rows in insertion order, `size` rows per page (a function: asked before
 * each page, so a reader can size pages by what earlier ones held), inside the caller's read-only
 * transaction; `onPage` gets each page's rows. SQLite resumes after the last page's
 * `rowid` (an index seek per page). PostgreSQL has no such key: a server-side cursor over a
 * sequential scan (physical order; synchronised scans off so the scan starts at the table's
 * first page) streams the snapshot without sorting it or rescanning it per page.
 */
export async function readPages(
  tx: SqlExecutor,
  dialect: Dialect,
  query: CompiledQuery,
  limit: number,
  size: number | (() => number),
  onPage: (rows: Row[]) => Promise<void>,
): Promise<void> {
  const pageSize = (): number => {
    const n = Math.floor(typeof size === 'number' ? size : size());
    return Number.isSafeInteger(n) && n >= 1 ? n : 1;
  };
  const where = (extra: string[]) => {
    const conditions = [...query.conditions, ...extra];
    return conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : '';
  };
  let remaining = limit;
  if (dialect.name === 'postgres') {
    await tx.run('SET LOCAL synchronize_seqscans = off');
    await tx.run(
      `DECLARE gex_table_read NO SCROLL CURSOR FOR SELECT ${query.selectList} FROM ${query.from}${where([])}`,
      query.params,
    );
    while (remaining > 0) {
      const n = Math.min(pageSize(), remaining);
      const rows = await tx.all<Row>(`FETCH FORWARD ${n} FROM gex_table_read`);
      if (rows.length > 0) await onPage(rows);
      remaining -= rows.length;
      if (rows.length < n) break;
    }
    await tx.run('CLOSE gex_table_read');
    return;
  }
  let after: number | undefined;
  while (remaining > 0) {
    const n = Math.min(pageSize(), remaining);
    const sql = `SELECT rowid AS gex_rowid, ${query.selectList} FROM ${query.from}${where(after === undefined ? [] : ['rowid > ?'])} ORDER BY rowid LIMIT ?`;
    const rows = await tx.all<Row>(sql, [...query.params, ...(after === undefined ? [] : [after]), n]);
    if (rows.length > 0) await onPage(rows);
    remaining -= rows.length;
    if (rows.length < n) break;
    after = Number(rows[rows.length - 1].gex_rowid);
  }
}
