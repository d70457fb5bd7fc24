import { UserError } from '../../common/errors.js';
import { displayId, displayText } from '../../common/log-text.js';
import { timestamp } from '../identifiers.js';
import type { Dialect, SqlParam } from '../sql/database.js';
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

/**
 * The expression that orders a table's rows as they were inserted, and resumes a read after a
 * given row: SQLite's `rowid`; PostgreSQL's `ctid` (physical position, stable within the read's
 * snapshot; PostgreSQL 14+ scans a `ctid >` range directly).
 */
export function rowLocator(dialect: Dialect): { select: string; order: string; after: string } {
  return dialect.name === 'sqlite' ? { select: 'rowid', order: 'rowid', after: 'rowid > ?' } : { select: 'ctid::text', order: 'ctid', after: 'ctid > ?::tid' };
}

/** One page of a read: the rows after `after` (a locator a previous page returned as gex_locator). */
export function pageSql(query: CompiledQuery, dialect: Dialect, resume: boolean): string {
  const locator = rowLocator(dialect);
  const conditions = resume ? [...query.conditions, locator.after] : query.conditions;
  const where = conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : '';
  return `SELECT ${locator.select} AS gex_locator, ${query.selectList} FROM ${query.from}${where} ORDER BY ${locator.order} LIMIT ?`;
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
