import path from 'node:path';
import { UserError } from '../common/errors.js';
import { loadMasterKey, SecretCipher } from './encryption.js';
import { EmbeddedBackend } from './embedded/embedded-backend.js';
import type { Database } from './sql/database.js';
import type { Component } from './types.js';
import { SqliteDatabase } from './sql/sqlite-database.js';
import { holdsStore } from './sql/store-schema.js';
import { createSqliteStoreFile, inspectSqliteStore } from './sqlite-file.js';
import { durabilityFromEnv } from './sql/sqlite-settings.js';
import {
  checkStoreScheme,
  displayLocation,
  isPostgresStore,
  keyFileFor,
  postgresOptionsFromEnv,
  READ_ONLY,
} from './store-location.js';

export { DEFAULT_STORE_FILE, displayLocation, isPostgresStore, isRemoteStore } from './store-location.js';

/**
 * The database of an embedded store: a PostgreSQL pool for a `postgres://` URL, else a SQLite file.
 * The PostgreSQL driver is loaded only when needed (SQLite users do not pay its start-up time).
 */
export async function openDatabase(location: string, env: NodeJS.ProcessEnv = process.env): Promise<Database> {
  if (!isPostgresStore(location))
    return new SqliteDatabase(path.resolve(location), { durability: durabilityFromEnv(env) });
  const options = { ...postgresOptionsFromEnv(env), label: displayLocation(location) };
  const { PostgresDatabase } = await import('./sql/postgres-database.js');
  return new PostgresDatabase(location, options);
}

export interface OpenEmbeddedStoreOptions {
  /**
   * For commands that only read: a store that does not exist yet is a user error ("no store at …")
   * and nothing is created — no database file, folder or key file.
   */
  mustExist?: boolean;
  /** components registered (refreshed) on open: what the application builds in, e.g. Generic Extractor */
  builtinComponents?: readonly Component[];
  /** told what was created (a new store, a new key file), for a command that says so */
  onCreate?: (what: string) => void;
}

/**
 * Opens the embedded store at `location`: a SQLite file or a PostgreSQL database, created and
 * migrated on first use (unless `mustExist`). The master key comes from GEX_MASTER_KEY, else the
 * key file of `keyFileFor` (created on first use). A location of another kind (a folder, a file
 * that is not SQLite, an unknown URL scheme) is refused before anything is created.
 */
export async function openEmbeddedStore(
  location: string,
  env: NodeJS.ProcessEnv = process.env,
  options: OpenEmbeddedStoreOptions = {},
): Promise<EmbeddedBackend> {
  checkStoreScheme(location);
  const mustExist = options.mustExist ?? false;
  const keyFile = keyFileFor(location, env);
  const keySource = env.GEX_MASTER_KEY?.trim() ? 'GEX_MASTER_KEY' : keyFile;
  if (isPostgresStore(location)) {
    const name = displayLocation(location);
    const db = await openDatabase(location, env);
    try {
      const exists = mustExist || options.onCreate ? await hasStoreSchema(db) : true;
      if (mustExist && !exists)
        throw new UserError('GEX_STORE_MISSING', `No store in the PostgreSQL database ${name}: ${READ_ONLY}`);
      const key = await loadMasterKey(keyFile, env, { create: !mustExist, onCreate: options.onCreate });
      if (!exists) options.onCreate?.(`a new, empty store in the PostgreSQL database ${name}`);
      return await EmbeddedBackend.open(db, new SecretCipher(key), name, {
        keySource,
        builtinComponents: options.builtinComponents,
      });
    } catch (error) {
      await db.close().catch(() => undefined);
      throw error;
    }
  }
  // a bad durability setting, then the file, are checked before anything is created
  durabilityFromEnv(env);
  const file = path.resolve(location);
  const { exists } = await inspectSqliteStore(file, { mustExist });
  const key = await loadMasterKey(keyFile, env, { create: !mustExist, onCreate: options.onCreate });
  if (!exists) {
    await createSqliteStoreFile(file);
    options.onCreate?.(`a new, empty store ${file}`);
  }
  return EmbeddedBackend.open(await openDatabase(file, env), new SecretCipher(key), file, {
    keySource,
    builtinComponents: options.builtinComponents,
  });
}

/** Whether the database holds a gex store: in its schema, or where an older gex kept it (moved on open). */
async function hasStoreSchema(db: Database): Promise<boolean> {
  const schema = await db.storeSchema!();
  if (await holdsStore(db, schema.name)) return true;
  return schema.legacy !== null && (await holdsStore(db, schema.legacy));
}
