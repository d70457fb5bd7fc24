import type { Dialect, SqlParam } from './database.js';

/**
 * Conditions that a column is one of a list of values, for a list of any length: the values go as
 * one parameter, the text of a JSON array, and the database expands it. An IN list of placeholders
 * is bounded by the parameters one statement takes (SQLite 32,766, PostgreSQL 65,535) and an OR
 * chain by SQLite's expression depth (1,000): a list from a request becomes neither. A text value
 * with NUL is in no row (PostgreSQL's text cannot hold it): it matches nothing.
 */
export interface ListCondition {
  sql: string;
  params: SqlParam[];
}

const NOTHING: ListCondition = { sql: '1 = 0', params: [] };

function listParam(values: readonly string[] | readonly number[]): { json: string; type: 'text' | 'integer' } | null {
  const kept = (values as ReadonlyArray<string | number>).filter((v) => typeof v === 'number' || !v.includes('\0'));
  if (kept.length === 0) return null;
  return { json: JSON.stringify(kept), type: typeof kept[0] === 'number' ? 'integer' : 'text' };
}

/** `column` is one of `values` (all text, or all whole numbers). */
export function anyOf(dialect: Dialect, column: string, values: readonly string[] | readonly number[]): ListCondition {
  const list = listParam(values);
  if (list === null) return NOTHING;
  return { sql: `${column} IN (${dialect.jsonArrayValues('?', list.type)})`, params: [list.json] };
}

/** The JSON array of text in `column` holds one of `values`, element for element. */
export function anyElementOf(dialect: Dialect, column: string, values: readonly string[]): ListCondition {
  const list = listParam(values);
  if (list === null) return NOTHING;
  return {
    sql: `EXISTS (SELECT 1 FROM (${dialect.jsonArrayValues(column, 'text')}) AS element WHERE element.value IN (${dialect.jsonArrayValues('?', 'text')}))`,
    params: [list.json],
  };
}
