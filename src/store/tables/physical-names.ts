import { createHash, randomBytes } from 'node:crypto';
import type { Dialect } from '../sql/database.js';

/**
 * Names of what the loader creates in the database. User text reaches SQL only as a quoted
 * identifier, and on SQLite not at all (generated names, mapped in storage_tables). On PostgreSQL
 * the names are the user's, so that psql shows `"in.c-shop"."users"`, cut to 63 bytes with a hash
 * suffix when longer — except column names PostgreSQL reserves (see physicalColumnName).
 */

/** The column every table has: when its row last changed. Users' columns may not take the name. */
export const TIMESTAMP_COLUMN = '_timestamp';

/** `"name"` with embedded quotes doubled: the SQL standard's identifier quoting (both databases). */
export function quoteIdentifier(name: string): string {
  if (name.includes('\0')) throw new RangeError('an identifier cannot contain NUL');
  return `"${name.replaceAll('"', '""')}"`;
}

/** PostgreSQL truncates identifiers to 63 bytes (NAMEDATALEN - 1). */
const PG_MAX_IDENTIFIER_BYTES = 63;
const HASH_SUFFIX_BYTES = 9; // "~" and 8 hex digits

/** `name` when it fits PostgreSQL's limit, else its longest prefix that fits with `~<hash of name>`. */
export function fitPostgresIdentifier(name: string): string {
  if (Buffer.byteLength(name) <= PG_MAX_IDENTIFIER_BYTES) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  let prefix = '';
  for (const ch of name) {
    if (Buffer.byteLength(prefix + ch) > PG_MAX_IDENTIFIER_BYTES - HASH_SUFFIX_BYTES) break;
    prefix += ch;
  }
  return `${prefix}~${hash}`;
}

/** A new table's physical name: generated on SQLite, the user's (fitted) on PostgreSQL. */
export function physicalTableName(dialect: Dialect, tableName: string): string {
  return dialect.name === 'sqlite' ? `gex_table_${randomBytes(8).toString('hex')}` : fitPostgresIdentifier(tableName);
}

/**
 * Column names a table cannot take as its own, whatever the user's column is called: PostgreSQL's
 * system columns (`oid` only up to version 11, reserved anyway) and the store's `_timestamp`.
 * Quoted identifiers are case-sensitive, so `XMIN` is free.
 */
const RESERVED_COLUMN_NAMES: ReadonlySet<string> = new Set([
  'tableoid',
  'xmin',
  'cmin',
  'xmax',
  'cmax',
  'ctid',
  'oid',
  TIMESTAMP_COLUMN,
]);

/**
 * The physical name of a table's new column `columnName`, at position `index`, given the physical
 * names the table's columns already have (`taken`). SQLite: `c<index>`. PostgreSQL: the user's name
 * (fitted to 63 bytes), so that psql shows it — unless the database or the store reserves that name
 * or another column has it (a fitted name may equal another column's name), then `c<index>`.
 * Either way the name is free: `_<n>` is appended until it is. The metadata maps every name, so
 * every user name loads and is read back as the user's.
 */
export function physicalColumnName(
  dialect: Dialect,
  columnName: string,
  index: number,
  taken: ReadonlySet<string>,
): string {
  const free = (name: string) => !taken.has(name) && !RESERVED_COLUMN_NAMES.has(name);
  if (dialect.name === 'postgres') {
    const own = fitPostgresIdentifier(columnName);
    if (free(own)) return own;
  }
  const generated = `c${index}`;
  if (free(generated)) return generated;
  for (let n = 1; ; n++) if (free(`${generated}_${n}`)) return `${generated}_${n}`;
}

/** A bucket's schema on PostgreSQL: its id, or with a random suffix when that schema is taken. */
export function postgresSchemaCandidate(bucketId: string, attempt: number): string {
  return fitPostgresIdentifier(attempt === 0 ? bucketId : `${bucketId}~${randomBytes(3).toString('hex')}`);
}
