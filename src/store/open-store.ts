import path from 'node:path';
import { loadMasterKey, SecretCipher } from './encryption.js';
import { EmbeddedBackend } from './embedded/embedded-backend.js';
import { SqliteDatabase } from './sql/sqlite-database.js';

export const DEFAULT_STORE_FILE = 'gex-store.sqlite';

export function isRemoteStore(location: string): boolean {
  return /^https?:\/\//i.test(location);
}

/**
 * Opens the embedded store at `location`: a SQLite file (created and migrated on first use). The
 * master key comes from GEX_MASTER_KEY or `<file>.key` next to the database.
 */
export async function openEmbeddedStore(location: string, env: NodeJS.ProcessEnv = process.env): Promise<EmbeddedBackend> {
  const file = path.resolve(location);
  const key = await loadMasterKey(`${file}.key`, env);
  return EmbeddedBackend.open(new SqliteDatabase(file), new SecretCipher(key), file);
}
