import { open, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import { UserError } from '../common/errors.js';
import { EXPECTED_STORE, READ_ONLY } from './store-location.js';

/** Every SQLite database file starts with these 16 bytes. */
const SQLITE_HEADER = 'SQLite format 3\u0000';

/** Store files hold configurations and (encrypted) secrets: readable by their owner only. */
export const STORE_FILE_MODE = 0o600;

/**
 * Checks what a SQLite store path names before anything is opened or created: an existing SQLite
 * database, or — unless `mustExist` — nothing yet, in an existing folder. A folder, another kind
 * of file or (with `mustExist`) a missing or empty file is a user error saying what was expected.
 * Returns whether the store must be created.
 */
export async function inspectSqliteStore(file: string, options: { mustExist: boolean }): Promise<{ exists: boolean }> {
  let stats: Stats;
  try {
    stats = await stat(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new UserError('GEX_STORE_UNUSABLE', `Cannot use the store ${file}: ${(error as Error).message}`);
    if (options.mustExist) throw new UserError('GEX_STORE_MISSING', `No store at ${file}: ${READ_ONLY}`);
    const folder = path.dirname(file);
    const parent = await stat(folder).catch(() => null);
    if (!parent?.isDirectory())
      throw new UserError('GEX_STORE_UNUSABLE', `Cannot create the store ${file}: the folder ${folder} does not exist`);
    return { exists: false };
  }
  if (stats.isDirectory())
    throw new UserError(
      'GEX_STORE_UNUSABLE',
      `The store ${file} is a folder: ${EXPECTED_STORE} (e.g. ${path.join(file, 'gex-store.sqlite')})`,
    );
  if (!stats.isFile())
    throw new UserError('GEX_STORE_UNUSABLE', `The store ${file} is not a regular file: ${EXPECTED_STORE}`);
  if (stats.size === 0) {
    // SQLite takes an empty file for a new database: fine to create, but there is no store to read yet
    if (options.mustExist)
      throw new UserError('GEX_STORE_MISSING', `No store at ${file} (the file is empty): ${READ_ONLY}`);
    return { exists: false };
  }
  if (!(await startsWithSqliteHeader(file)))
    throw new UserError('GEX_STORE_UNUSABLE', `The store ${file} is not a SQLite database: ${EXPECTED_STORE}`);
  return { exists: true };
}

async function startsWithSqliteHeader(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const { bytesRead, buffer } = await handle.read(Buffer.alloc(SQLITE_HEADER.length), 0, SQLITE_HEADER.length, 0);
    return bytesRead === SQLITE_HEADER.length && buffer.toString('latin1') === SQLITE_HEADER;
  } finally {
    await handle.close();
  }
}

/**
 * Creates the (empty) database file with mode 0600 before SQLite opens it: SQLite gives the
 * `-wal` and `-shm` files it creates the database file's mode, so all three stay private. The
 * explicit chmod makes the mode independent of the process umask. A file another process created
 * meanwhile is left as it is.
 */
export async function createSqliteStoreFile(file: string): Promise<void> {
  let handle;
  try {
    handle = await open(file, 'wx', STORE_FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw new UserError('GEX_STORE_UNUSABLE', `Cannot create the store ${file}: ${(error as Error).message}`);
  }
  try {
    await handle.chmod(STORE_FILE_MODE);
  } finally {
    await handle.close();
  }
}
