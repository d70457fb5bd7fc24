import { UserError } from '../../common/errors.js';
import { isJsonObject, type JsonValue } from '../../json/index.js';
import { phpToString } from '../../php/index.js';
import type { ConfigStore } from '../config-store.js';
import {
  cipherScope,
  componentCipherScope,
  serviceCipherScope,
  type ProjectSecrets,
  type SecretCipher,
} from '../encryption.js';
import { addressableIdProblem } from '../addressable-id.js';
import type { Database } from '../sql/database.js';
import { requireRunner, type RevealRequest } from '../secret-reveal.js';
import { ProjectFiles, purgeExpiredFiles } from '../files/project-files.js';
import { ObjectStoreBytes } from '../files/file-bytes.js';
import type { ObjectStore } from '../files/object-store.js';
import { JobLocks, trySingletonLock } from '../sql/advisory-locks.js';
import { sweepObjects, type SweepCounts, type SweepOptions } from '../files/object-sweep.js';
import type { PostgresDatabase } from '../sql/postgres-database.js';
import {
  endOrphanedJobs,
  ProjectTables,
  StorageJobs,
  type OrphanCheck,
  type StorageJobLiveness,
} from '../tables/index.js';
import { migrate } from '../sql/migrations.js';
import type { Component, TokenInfo } from '../types.js';
import { EmbeddedConfigStore } from './embedded-config-store.js';
import { checkMasterKey } from './master-key-check.js';
import { Repository } from './repository.js';
import {
  authenticate,
  createToken,
  DEFAULT_PROJECT,
  localToken,
  ProjectTokens,
  type CreateTokenOptions,
} from './tokens.js';

export interface EmbeddedBackendOptions {
  /** where the master key came from, for the error when it is not the store's key */
  keySource?: string;
  /**
   * Components the store registers itself (and refreshes) on every open, e.g. Generic Extractor
   * with the schema of the parameters this build accepts; composed by the application, not the store.
   */
  builtinComponents?: readonly Component[];
}

/**
 * The embedded store: one database (SQLite file or PostgreSQL) holding projects, tokens, the
 * component registry and configurations. Created and migrated on first use.
 */
export class EmbeddedBackend {
  /** files' bytes in an object store (`--file-storage`); undefined: chunk rows of `db` */
  private fileBytes: ObjectStoreBytes | undefined;

  private constructor(
    /** the store's database: the jobs layer keeps its queue jobs and schedules in it */
    readonly db: Database,
    private readonly cipher: SecretCipher,
    readonly location: string,
  ) {}

  /**
   * Migrates the database, checks that `cipher` holds the store's master key and registers the
   * built-in components. Closes `db` on failure.
   */
  static async open(
    db: Database,
    cipher: SecretCipher,
    location: string,
    options: EmbeddedBackendOptions = {},
  ): Promise<EmbeddedBackend> {
    try {
      await migrate(db);
      const backend = new EmbeddedBackend(db, cipher, location);
      await backend.transaction(async (repo) => {
        await checkMasterKey(repo, cipher, options.keySource ?? 'the master key');
        for (const component of options.builtinComponents ?? []) await repo.saveComponent(component, { builtin: true });
      });
      return backend;
    } catch (error) {
      await db.close().catch(() => undefined);
      throw error;
    }
  }

  private transaction<T>(work: (repo: Repository) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => work(new Repository(tx, this.db.dialect)));
  }

  /** The token's identity, or null for an unknown token. */
  authenticate(token: string): Promise<TokenInfo | null> {
    return authenticate(this.db, token);
  }

  /** One cheap read of the schema: fails when the database cannot be reached or read. */
  async ping(): Promise<void> {
    await this.db.get('SELECT version FROM schema_migrations ORDER BY version LIMIT 1');
  }

  changeMarker(): Promise<string | null> {
    return this.db.changeMarker();
  }

  session(token: TokenInfo): ConfigStore {
    return new EmbeddedConfigStore(this.db, this.cipher, token);
  }

  tables(token: TokenInfo): ProjectTables {
    return new ProjectTables(this.db, token.projectId);
  }

  storageJobs(token: TokenInfo): StorageJobs {
    return new StorageJobs(this.db, token.projectId);
  }

  /**
   * Keeps files' bytes in `objects` rather than in the database: set at start, before serving.
   * Nothing is moved: bytes of files uploaded to the database before are not read from there any
   * more. The caller has checked the store (ObjectStore.check) and closes it after the backend.
   */
  storeFileBytesIn(objects: ObjectStore): void {
    this.fileBytes = new ObjectStoreBytes(objects);
  }

  files(token: TokenInfo): ProjectFiles {
    return new ProjectFiles(this.db, token.projectId, undefined, this.fileBytes);
  }

  /** The project's tables and files on a connection of their own where SQLite needs one (a long job must not hold the server's). */
  forStorageJob(token: TokenInfo): { tables: ProjectTables; files: ProjectFiles; close(): Promise<void> } {
    const db = this.db.separateConnection?.() ?? this.db;
    return {
      tables: new ProjectTables(db, token.projectId),
      files: new ProjectFiles(db, token.projectId, undefined, this.fileBytes),
      close: async () => {
        if (db !== this.db) await db.close();
      },
    };
  }

  endOrphanedJobs(isGone: OrphanCheck): Promise<number[]> {
    return endOrphanedJobs(this.db, isGone);
  }

  /** PostgreSQL: Storage jobs' liveness by session advisory locks (any machine); SQLite: none (one machine). */
  storageJobLiveness(onLost: (error: Error) => void): StorageJobLiveness | undefined {
    if (this.db.dialect.name !== 'postgres') return undefined;
    const db = this.db as PostgresDatabase;
    const held = new JobLocks(db, 'storage jobs', onLost, 'storage-job');
    const checked = new JobLocks(db, 'storage job monitor', () => undefined, 'storage-job');
    return {
      hold: (id) => held.lock(id),
      release: (id) => held.unlock(id),
      orphans: { gone: (_worker, id) => checked.takeIfOrphaned(id), release: (id) => checked.unlock(id) },
      close: async () => {
        await held.close();
        await checked.close();
      },
    };
  }

  purgeExpiredFiles(): Promise<number> {
    return purgeExpiredFiles(this.db, new Date(), undefined, this.fileBytes);
  }

  /**
   * Sweeps the object store of what no file row names (object-sweep.ts); undefined when files are
   * in the database, or another process of a PostgreSQL store is sweeping (one at a time; a SQLite
   * store has one server).
   */
  async sweepObjects(options: SweepOptions = {}): Promise<SweepCounts | undefined> {
    const objects = this.fileBytes?.objects;
    if (!objects) return undefined;
    if (this.db.dialect.name !== 'postgres') return sweepObjects(this.db, objects, options);
    const release = await trySingletonLock(this.db as PostgresDatabase, 'object-sweep');
    if (!release) return undefined;
    try {
      return await sweepObjects(this.db, objects, options);
    } finally {
      await release();
    }
  }

  /** Access for the local CLI and runner (no token needed): an internal token of the project. */
  async localSession(project = DEFAULT_PROJECT): Promise<EmbeddedConfigStore> {
    return new EmbeddedConfigStore(this.db, this.cipher, await localToken(this.db, project));
  }

  /** Creates a token of a project (created if missing); the token text is returned only here. */
  createToken(options: CreateTokenOptions): Promise<{ token: string; info: TokenInfo }> {
    return createToken(this.db, options);
  }

  /** The tokens of the token's project, as its master tokens manage them over HTTP. */
  tokens(token: TokenInfo): ProjectTokens {
    return new ProjectTokens(this.db, token.projectId, token.projectName);
  }

  /** Every token but the projects' internal ones; never the token text (only its hash is stored). */
  listTokens(): Promise<TokenInfo[]> {
    return this.transaction((repo) => repo.listTokens());
  }

  /** A token by id, internal ones included; undefined when it was deleted. */
  tokenById(id: number): Promise<TokenInfo | undefined> {
    return this.transaction((repo) => repo.tokenById(id));
  }

  /** Revokes (deletes) a token; false when there is no such token. Requests with it get 401 from then on. */
  revokeToken(id: number): Promise<boolean> {
    return this.transaction((repo) => repo.deleteToken(id));
  }

  listComponents(): Promise<Component[]> {
    return this.transaction((repo) => repo.listComponents());
  }

  getComponent(id: string): Promise<Component | undefined> {
    return this.transaction((repo) => repo.loadComponent(id));
  }

  /**
   * Registers components given in Keboola's shape (a JSON array); returns their ids. `#` values
   * anywhere in a component (e.g. `data.image_parameters`) are stored encrypted for the component;
   * re-importing an unchanged secret keeps its cipher.
   */
  async importComponents(list: JsonValue): Promise<string[]> {
    if (!Array.isArray(list))
      throw new UserError('GEX_INPUT_INVALID', 'Components must be a JSON array of component objects');
    const components = list.map((item, i) => {
      const id = isJsonObject(item) ? item.get('id') : undefined;
      const type = isJsonObject(item) ? item.get('type') : undefined;
      if (!isJsonObject(item) || typeof id !== 'string' || id === '' || typeof type !== 'string' || type === '') {
        throw new UserError('GEX_INPUT_INVALID', `Component [${i}] needs at least a non-empty string "id" and "type"`);
      }
      const idProblem = addressableIdProblem(id);
      if (idProblem) throw new UserError('GEX_INPUT_INVALID', `Component [${i}]: its id ${idProblem}`);
      return { id, type, name: phpToString(item.get('name') ?? id), definition: item };
    });
    await this.transaction(async (repo) => {
      for (const c of components) {
        const previous = (await repo.loadComponent(c.id))?.definition;
        await repo.saveComponent(
          { ...c, definition: this.cipher.encryptTree(c.definition, componentCipherScope(c.id), previous) },
          { builtin: false },
        );
      }
    });
    return components.map((c) => c.id);
  }

  /** Plaintext of the `#` values of a registered component's part — for the runner only, in memory. */
  decryptComponentSecrets(componentId: string, value: JsonValue): JsonValue {
    return this.cipher.decryptTree(value, componentCipherScope(componentId));
  }

  /** The master key's seal for secrets a service keeps per project, bound to `purpose` (never readable as another's). */
  projectSecrets(purpose: string): ProjectSecrets {
    return {
      seal: (projectId, plain) => this.cipher.encrypt(plain, serviceCipherScope(projectId, purpose)),
      open: (projectId, sealed) => this.cipher.decrypt(sealed, serviceCipherScope(projectId, purpose)),
    };
  }

  /** Plaintext of the `#` values of a stored body — for the runner only, in memory. */
  decryptSecrets(projectId: number, componentId: string, value: JsonValue): JsonValue {
    return this.cipher.decryptTree(value, cipherScope(projectId, componentId));
  }

  /**
   * The plaintext of ciphers for a run elsewhere, given only to a runner token
   * (docs/security.md#who-sees-a-secret): `project` ciphers decrypt only as the token's own
   * project's (the project is bound into each cipher), `component` ones as the registry's. Null for
   * a value that does not decrypt so; a token that is not a runner token is refused (403).
   */
  revealSecrets(token: TokenInfo, request: RevealRequest): Array<string | null> {
    requireRunner(token);
    const scope =
      request.scope === 'project'
        ? cipherScope(token.projectId, request.componentId)
        : componentCipherScope(request.componentId);
    return this.cipher.decryptEach(request.ciphers, scope);
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
