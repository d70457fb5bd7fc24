import { UserError } from '../../common/errors.js';
import { displayId, displayText } from '../../common/log-text.js';
import { timestamp } from '../identifiers.js';
import type { Dialect, SqlExecutor, SqlParam } from '../sql/database.js';
import { qualifiedName, type CatalogTable } from './catalog.js';
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
 * Compiles `query` against `table`. User names reach the SQL only as the table's physical column
 * names, looked up in the metadata; values only as parameters.
 */
export function compileQuery(table: CatalogTable, query: TableQuery): CompiledQuery {
  const byName = new Map(table.columns.map((c) => [c.name, c.physical]));
  const physical = (name: string, role: string): string => {
    const column = byName.get(name);
    if (column === undefined) throw new UserError(`Table ${displayId(tableIdText(table.id))} has no column ${displayId(name)} (${role}).`);
    return quoteIdentifier(column);
  };
  const columns = query.columns && query.columns.length > 0 ? [...query.columns] : table.columns.map((c) => c.name);
  if (new Set(columns).size !== columns.length) throw new UserError('The columns to read name a column twice.');
  const selected = columns.map((name, i) => `${physical(name, 'columns')} AS c${i}`);
  const conditions: string[] = [];
  const params: SqlParam[] = [];
  if (query.whereColumn !== undefined && query.whereColumn !== '') {
    const values = query.whereValues ?? [];
    if (values.length === 0) throw new UserError(`A filter on column ${displayId(query.whereColumn)} needs at least one value (whereValues).`);
    if (values.length > MAX_WHERE_VALUES) throw new UserError(`A filter may list at most ${MAX_WHERE_VALUES} values; it lists ${values.length}.`);
    const list = values.map(() => '?').join(', ');
    conditions.push(`${physical(query.whereColumn, 'whereColumn')} ${query.whereOperator === 'ne' ? 'NOT IN' : 'IN'} (${list})`);
    params.push(...values);
  } else if (query.whereValues && query.whereValues.length > 0) {
    throw new UserError('whereValues were given without whereColumn: name the column to filter on.');
  }
  if (query.changedSince !== undefined) {
    conditions.push(`${quoteIdentifier(TIMESTAMP_COLUMN)} >= ?`);
    params.push(timestamp(query.changedSince));
  }
  if (query.changedUntil !== undefined) {
    conditions.push(`${quoteIdentifier(TIMESTAMP_COLUMN)} < ?`);
    params.push(timestamp(query.changedUntil));
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
    await tx.run(`DECLARE gex_table_read NO SCROLL CURSOR FOR SELECT ${query.selectList} FROM ${query.from}${where([])}`, query.params);
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

const UNITS: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86_400, week: 604_800 };

/**
 * A `changedSince` / `changed_since` value as Keboola takes it: a Unix timestamp, an ISO 8601 date
 * or date-time, or a relative `-N unit(s)` (seconds to weeks) counted back from `now`.
 */
export function parseChangedSince(value: string, now: Date = new Date(), where = 'changedSince'): Date {
  const text = value.trim();
  if (/^\d{1,12}$/.test(text)) return new Date(Number(text) * 1000);
  const relative = /^-\s*(\d{1,9})\s*(second|minute|hour|day|week)s?$/i.exec(text);
  if (relative) return new Date(now.getTime() - Number(relative[1]) * UNITS[relative[2].toLowerCase()] * 1000);
  if (/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)) {
    // a date or date-time without a zone is UTC, as everything the store records
    const iso = text.length === 10 ? `${text}T00:00:00Z` : text.replace(' ', 'T').replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
    const date = new Date(/(Z|[+-]\d{2}:\d{2})$/.test(iso) ? iso : `${iso}Z`);
    if (!Number.isNaN(date.getTime())) return date;
  }
  throw new UserError(
    `${where} ${displayText(JSON.stringify(value.slice(0, 100)))} is not a moment: give a Unix timestamp, an ISO 8601 date (2025-01-31 or 2025-01-31T12:00:00Z) or a relative "-2 days".`,
  );
}
