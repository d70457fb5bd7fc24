import { createHash, randomBytes } from 'node:crypto';
import type { Dialect } from '../sql/database.js';

/**
 * Names of what the loader creates in the database. User text reaches SQL only as a quoted
 * identifier, and on SQLite not at all (generated names, mapped in storage_tables). On PostgreSQL
 * the names are the user's, so that psql shows `"in.c-shop"."users"`, cut to 63 bytes with a hash
 * suffix when longer.
 */

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

/** A new column's physical name; `index` is its position among the table's columns. */
export function physicalColumnName(dialect: Dialect, columnName: string, index: number): string {
  return dialect.name === 'sqlite' ? `c${index}` : fitPostgresIdentifier(columnName);
}

/** A bucket's schema on PostgreSQL: its id, or with a random suffix when that schema is taken. */
export function postgresSchemaCandidate(bucketId: string, attempt: number): string {
  return fitPostgresIdentifier(attempt === 0 ? bucketId : `${bucketId}~${randomBytes(3).toString('hex')}`);
}

/** The column every table has: when its row last changed. Users' columns may not take the name. */
export const TIMESTAMP_COLUMN = '_timestamp';
