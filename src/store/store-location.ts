import os from 'node:os';
import path from 'node:path';
import { UserError } from '../common/errors.js';
import type { PostgresOptions } from './sql/postgres-database.js';

/**
 * What a `--store` / `GEX_STORE` value names: an http(s) Storage API, a PostgreSQL database
 * (`postgres://` or `postgresql://`), else a SQLite file.
 */

export const DEFAULT_STORE_FILE = 'gex-store.sqlite';

/** The store location from an option, else GEX_STORE, else the default file. */
export function resolveStoreLocation(option: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return option || env.GEX_STORE || DEFAULT_STORE_FILE;
}

/**
 * The store a command uses: `--store`, else `$KBC_URL` (the Storage API of a Keboola job), else
 * `$GEX_STORE`, else the default file. Every command that opens a store takes it from here.
 */
export function storeLocationFromArgs(option: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return option || env.KBC_URL || resolveStoreLocation(undefined, env);
}

export function isRemoteStore(location: string): boolean {
  return /^https?:\/\//i.test(location);
}

export function isPostgresStore(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** What a store location may be, for messages about one that is none of them. */
export const EXPECTED_STORE =
  'expected a SQLite file path, a postgres:// (or postgresql://) URL, or the http(s):// address of a Storage API';

/** Why a command that only reads or runs found no store (only the commands that create configurations, and gex serve, create one). */
export const READ_ONLY =
  'this command only reads or runs, so it creates no store. Check --store ($KBC_URL, $GEX_STORE), or create the store with "gex configs import FILE" or "gex configs create" first. ' +
  'Expected an existing store: a SQLite file, a postgres:// URL, or the http(s):// address of a Storage API';

/**
 * Refuses a location that looks like a URL of another kind (`htp://…`, `mysql://…`): it would
 * otherwise be taken for a SQLite file name and silently create a new, empty store.
 */
export function checkStoreScheme(location: string): void {
  if (isRemoteStore(location) || isPostgresStore(location)) return;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(location)?.[1];
  if (scheme)
    throw new UserError(
      'GEX_STORE_UNUSABLE',
      `The store ${JSON.stringify(hidePassword(location))} has an unknown URL scheme "${scheme}://": ${EXPECTED_STORE}`,
    );
}

/** A URL without the password of its `user:password@` part. */
function hidePassword(location: string): string {
  return location.replace(/^([^:]+:\/\/[^:@/]*:)[^@/]*@/, '$1***@');
}

/** The location as it may be printed: a PostgreSQL URL without its password. */
export function displayLocation(location: string): string {
  if (!isPostgresStore(location)) return location;
  try {
    const url = new URL(location);
    if (url.password) url.password = '***';
    if (url.searchParams.has('password')) url.searchParams.set('password', '***');
    return url.toString();
  } catch {
    return location.replace(/:[^:@/]*@/, ':***@');
  }
}

/**
 * The key file used when GEX_MASTER_KEY is not set: `$GEX_KEY_FILE`, else next to a SQLite file
 * (`<file>.key`), else — for PostgreSQL, shared by processes on many machines —
 * `$XDG_CONFIG_HOME/gex/master.key` (default `~/.config/gex/master.key`).
 */
export function keyFileFor(location: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.GEX_KEY_FILE) return path.resolve(env.GEX_KEY_FILE);
  if (isPostgresStore(location))
    return path.join(env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'gex', 'master.key');
  return `${path.resolve(location)}.key`;
}

const POSTGRES_ENV: Array<[keyof PostgresOptions, string]> = [
  ['poolSize', 'GEX_PG_POOL_SIZE'],
  ['connectTimeoutMs', 'GEX_PG_CONNECT_TIMEOUT_MS'],
  ['statementTimeoutMs', 'GEX_PG_STATEMENT_TIMEOUT_MS'],
  ['idleTimeoutMs', 'GEX_PG_IDLE_TIMEOUT_MS'],
];

/** Pool size and timeouts from `GEX_PG_*` variables (unset ones keep the adapter's defaults). */
export function postgresOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): PostgresOptions {
  const options: PostgresOptions = {};
  for (const [option, variable] of POSTGRES_ENV) {
    const text = env[variable]?.trim();
    if (!text) continue;
    if (!/^[1-9]\d*$/.test(text))
      throw new UserError('GEX_SETTING_INVALID', `${variable} must be a whole number above 0, got "${text}"`);
    (options as Record<string, number>)[option] = Number(text);
  }
  return options;
}
