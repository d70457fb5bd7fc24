import { UserError } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import type { JsonValue } from '../json/index.js';
import type { ConfigStore } from './config-store.js';
import { CIPHER_PREFIX, cipherScope, componentCipherScope, SecretCipher, type CipherScope } from './encryption.js';
import type { EmbeddedBackend } from './embedded/embedded-backend.js';
import { displayLocation, isRemoteStore, openEmbeddedStore } from './open-store.js';
import { HttpConfigStore } from './remote/http-config-store.js';
import { tokenMissing, tokenRefused, type TokenOrigin } from './token-refusal.js';
import { HttpTableSource } from './remote/http-table-source.js';
import { StorageApiClient } from './remote/storage-api-client.js';
import { TableTransfer } from './remote/table-transfer.js';
import { RUN_STORE_RETRY, retrySettingsFromEnv, type RetryBudgetSettings } from './remote/retry-budget.js';
import type { TableSource } from './table-source.js';
import { ProjectTables } from './tables/index.js';
import type { Component } from './types.js';
import { NO_RUN_LOCKS, type RunLockAdapter } from './run-lock/run-lock-adapter.js';
import { SqliteRunLocks } from './run-lock/sqlite-run-lock.js';
import type { PostgresDatabase } from './sql/postgres-database.js';

/** What every opened store offers the CLI and the runner beyond the ConfigStore calls. */
interface StoreAccess {
  store: ConfigStore;
  /** what the user named (file path or URL; a PostgreSQL URL without its password) */
  location: string;
  /** the store's run locks (one adapter per kind of store) */
  runLocks: RunLockAdapter;
  /** plaintext of `#` values, in memory only */
  decryptSecrets(componentId: string, value: JsonValue): Promise<JsonValue>;
  /** plaintext of `#` values of the component registry (image parameters), in memory only */
  decryptComponentSecrets(componentId: string, value: JsonValue): Promise<JsonValue>;
  close(): Promise<void>;
}

/** The embedded store, in a SQLite file or a PostgreSQL database. */
export interface EmbeddedOpenedStore extends StoreAccess {
  kind: 'sqlite' | 'postgres';
  backend: EmbeddedBackend;
  /** the project's Storage tables */
  tables: ProjectTables;
}

/** A remote Storage API (gex serve or a Keboola stack): its tables are the server's. */
export interface RemoteOpenedStore extends StoreAccess {
  kind: 'remote';
  /** the project's tables, through Keboola's table API */
  remoteTables: TableSource;
  /** table loads and exports through files and storage jobs (a gex server; a Keboola stack refuses them) */
  tableTransfer: TableTransfer;
}

/** A store opened for the CLI or the runner: which kind it is says what else it offers. */
export type OpenedStore = EmbeddedOpenedStore | RemoteOpenedStore;

export interface OpenConfigStoreOptions {
  /** token for a remote store (KBC_TOKEN), or to act as a given token on the embedded one */
  token?: string;
  /** where `token` came from, named when it is refused (default: KBC_TOKEN when taken from there) */
  tokenOrigin?: TokenOrigin;
  /** project of the embedded store used without a token (default: "default") */
  project?: string;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** commands that only read: an embedded store must already exist, and nothing is created */
  mustExist?: boolean;
  /** time budget of each call to a remote store (default RUN_STORE_RETRY; GEX_STORE_TIMEOUT replaces its total) */
  remoteRetry?: RetryBudgetSettings;
  /** components an embedded store registers (refreshes) on open, see OpenEmbeddedStoreOptions */
  builtinComponents?: readonly Component[];
}

/** The store location from an option, else GEX_STORE, else the default file. */
export { resolveStoreLocation, storeLocationFromArgs } from './store-location.js';

function containsCipher(value: JsonValue): boolean {
  if (typeof value === 'string') return value.startsWith('KBC::');
  if (Array.isArray(value)) return value.some(containsCipher);
  if (value instanceof Map) return [...value.values()].some(containsCipher);
  return false;
}

/**
 * Opens a SQLite file or a PostgreSQL database (embedded) or an http(s) Storage API (gex serve or a Keboola stack). A
 * remote store's secrets can be decrypted only when they are gex ciphers and GEX_MASTER_KEY is
 * the server's key; Keboola's own ciphers never leave Keboola.
 */
export async function openConfigStore(location: string, options: OpenConfigStoreOptions = {}): Promise<OpenedStore> {
  const env = options.env ?? process.env;
  const tokenOrigin = options.tokenOrigin ?? (options.token === undefined ? 'KBC_TOKEN' : undefined);
  if (isRemoteStore(location)) {
    const token = options.token ?? env.KBC_TOKEN;
    if (!token) throw tokenMissing(`the Storage API at ${location}`);
    const retry = retrySettingsFromEnv(options.remoteRetry ?? RUN_STORE_RETRY, env);
    const client = { url: location, token, tokenOrigin, logger: options.logger, retry };
    const store = new HttpConfigStore(client);
    const key = env.GEX_MASTER_KEY?.trim();
    let projectId: number | undefined;
    const decrypt = (value: JsonValue, scope: CipherScope): JsonValue => {
      if (!containsCipher(value)) return value;
      if (!key) {
        throw new UserError(
          'GEX_MASTER_KEY_INVALID',
          `The configuration holds encrypted values (${CIPHER_PREFIX}…) that only the store can decrypt. ` +
            'Set GEX_MASTER_KEY to the key of the gex server, or run against the embedded store.',
        );
      }
      const hex = /^[0-9a-fA-F]{64}$/.test(key);
      return new SecretCipher(Buffer.from(key, hex ? 'hex' : 'base64')).decryptTree(value, scope);
    };
    return {
      kind: 'remote',
      store,
      location,
      runLocks: NO_RUN_LOCKS,
      remoteTables: new HttpTableSource(client),
      tableTransfer: new TableTransfer({
        api: new StorageApiClient(client),
        url: location,
      }),
      async decryptSecrets(componentId, value) {
        if (!containsCipher(value)) return value;
        projectId ??= (await store.verifyToken()).projectId;
        return decrypt(value, cipherScope(projectId, componentId));
      },
      // image parameters are decrypted when the key can (a gex server's ciphers); a Keboola stack's
      // stay ciphers, as before — Generic Extractor does not need their plaintext
      decryptComponentSecrets: async (componentId, value) => {
        if (!key || !containsCipher(value)) return value;
        try {
          return decrypt(value, componentCipherScope(componentId));
        } catch {
          return value;
        }
      },
      close: async () => undefined,
    };
  }
  const backend = await openEmbeddedStore(location, env, {
    mustExist: options.mustExist,
    builtinComponents: options.builtinComponents,
  });
  try {
    let store: ConfigStore;
    // an empty --token is no token: the store is used directly, as without one
    const token = options.token;
    if (token) {
      const info = await backend.authenticate(token);
      if (!info) throw tokenRefused(`the store ${displayLocation(location)}`, tokenOrigin, 'Invalid access token');
      store = backend.session(info);
    } else store = await backend.localSession(options.project);
    const { projectId } = await store.verifyToken();
    const postgres = backend.db.dialect.name === 'postgres';
    return {
      kind: postgres ? 'postgres' : 'sqlite',
      store,
      location: displayLocation(location),
      runLocks: await runLocksOf(backend, projectId),
      backend,
      tables: new ProjectTables(backend.db, projectId),
      decryptSecrets: async (componentId, value) => backend.decryptSecrets(projectId, componentId, value),
      decryptComponentSecrets: async (componentId, value) => backend.decryptComponentSecrets(componentId, value),
      close: () => backend.close(),
    };
  } catch (error) {
    await backend.close();
    throw error;
  }
}

/** The run-lock adapter of an embedded store's database (PostgreSQL's is loaded only when used). */
async function runLocksOf(backend: EmbeddedBackend, projectId: number): Promise<RunLockAdapter> {
  if (backend.db.dialect.name !== 'postgres') return new SqliteRunLocks(backend.location, projectId);
  const { PostgresRunLocks } = await import('./run-lock/postgres-run-lock.js');
  return new PostgresRunLocks(backend.db as PostgresDatabase, projectId);
}
