import path from 'node:path';
import { loadMasterKey, SecretCipher } from './encryption.js';
import { EmbeddedBackend } from './embedded/embedded-backend.js';
import type { Database } from './sql/database.js';
import { SqliteDatabase } from './sql/sqlite-database.js';
import { durabilityFromEnv } from './sql/sqlite-settings.js';
import { displayLocation, isPostgresStore, keyFileFor, postgresOptionsFromEnv } from './store-location.js';

export { DEFAULT_STORE_FILE, displayLocation, isPostgresStore, isRemoteStore } from './store-location.js';

/**
 * The database of an embedded store: a PostgreSQL pool for a `postgres://` URL, else a SQLite file.
 * The PostgreSQL driver is loaded only when needed (SQLite users do not pay its start-up time).
 */
export async function openDatabase(location: string, env: NodeJS.ProcessEnv = process.env): Promise<Database> {
  if (!isPostgresStore(location)) return new SqliteDatabase(path.resolve(location), { durability: durabilityFromEnv(env) });
  const options = { ...postgresOptionsFromEnv(env), label: displayLocation(location) };
  const { PostgresDatabase } = await import('./sql/postgres-database.js');
  return new PostgresDatabase(location, options);
}

/**
 * Opens the embedded store at `location`: a SQLite file or a PostgreSQL database, created and
 * migrated on first use. The master key comes from GEX_MASTER_KEY, else the key file of
 * `keyFileFor` (created on first use).
 */
export async function openEmbeddedStore(location: string, env: NodeJS.ProcessEnv = process.env): Promise<EmbeddedBackend> {
  const keyFile = keyFileFor(location, env);
  const key = await loadMasterKey(keyFile, env);
  const name = isPostgresStore(location) ? displayLocation(location) : path.resolve(location);
  const keySource = env.GEX_MASTER_KEY?.trim() ? 'GEX_MASTER_KEY' : keyFile;
  return EmbeddedBackend.open(await openDatabase(location, env), new SecretCipher(key), name, keySource);
}
