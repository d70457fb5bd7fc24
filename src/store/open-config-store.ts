import { UserError } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import type { JsonValue } from '../json/index.js';
import type { ConfigStore } from './config-store.js';
import type { EmbeddedBackend } from './embedded/embedded-backend.js';
import { displayLocation, isRemoteStore, openEmbeddedStore } from './open-store.js';
import { HttpConfigStore } from './remote/http-config-store.js';
import { tokenMissing, tokenRefused, type TokenOrigin } from './token-refusal.js';
import { HttpTableSource } from './remote/http-table-source.js';
import { RemoteSecrets } from './remote/remote-secrets.js';
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
  /** the command decrypts secrets (run, check): against a Storage API, a master key of its own is refused */
  decrypts?: boolean;
}

/** The store location from an option, else GEX_STORE, else the default file. */
export { resolveStoreLocation, storeLocationFromArgs } from './store-location.js';

/**
 * A command that decrypts (run, check) against a Storage API is refused a master key of its own:
 * the server decrypts for a runner token, and a key meant for it would be one that decrypts every
 * project's secrets on a machine that needs none of them (docs/security.md#who-sees-a-secret).
 * GEX_MASTER_KEY and GEX_KEY_FILE alike, so neither is ever silently ignored.
 */
function refuseLocalKey(location: string, env: NodeJS.ProcessEnv): void {
  const set = ['GEX_MASTER_KEY', 'GEX_KEY_FILE'].filter((name) => env[name]?.trim());
  if (set.length === 0) return;
  throw new UserError(
    'GEX_MASTER_KEY_INVALID',
    `${set.join(' and ')} ${set.length > 1 ? 'are' : 'is'} set, but against the Storage API at ${location} gex uses no master key of its own: ` +
      'the server decrypts the secrets for a runner token ("gex tokens create --runner"). ' +
      `Unset ${set.join(' and ')} for this command; the master key decrypts every project's secrets and belongs only where the store is.`,
  );
}

/**
 * Opens a SQLite file or a PostgreSQL database (embedded) or an http(s) Storage API (gex serve or a
 * Keboola stack). A remote store's secrets are decrypted by its server, for a runner token only;
 * Keboola's own ciphers never leave Keboola.
 */
export async function openConfigStore(location: string, options: OpenConfigStoreOptions = {}): Promise<OpenedStore> {
  const env = options.env ?? process.env;
  const tokenOrigin = options.tokenOrigin ?? (options.token === undefined ? 'KBC_TOKEN' : undefined);
  if (isRemoteStore(location)) {
    const token = options.token ?? env.KBC_TOKEN;
    if (!token) throw tokenMissing(`the Storage API at ${location}`);
    const retry = retrySettingsFromEnv(options.remoteRetry ?? RUN_STORE_RETRY, env);
    if (options.decrypts) refuseLocalKey(location, env);
    const client = { url: location, token, tokenOrigin, logger: options.logger, retry };
    const store = new HttpConfigStore(client);
    const api = new StorageApiClient(client);
    // the server decrypts, for a runner token only: a runner elsewhere never holds the master key
    const secrets = new RemoteSecrets(api, location);
    return {
      kind: 'remote',
      store,
      location,
      runLocks: NO_RUN_LOCKS,
      remoteTables: new HttpTableSource(client),
      tableTransfer: new TableTransfer({ api, url: location }),
      decryptSecrets: (componentId, value) => secrets.decrypt('project', componentId, value, 'fail'),
      // a token that is not a runner token, or a Keboola stack, passes image parameters on as ciphers,
      // as before: Generic Extractor does not need their plaintext
      decryptComponentSecrets: (componentId, value) => secrets.decrypt('component', componentId, value, 'keep'),
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
