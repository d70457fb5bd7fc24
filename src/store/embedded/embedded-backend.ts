import { createHash, randomBytes } from 'node:crypto';
import { UserError } from '../../common/errors.js';
import { isJsonObject, type JsonValue } from '../../json/index.js';
import { phpToString } from '../../php/index.js';
import { genericExtractorComponent } from '../builtin-components.js';
import type { ConfigStore } from '../config-store.js';
import { cipherScope, componentCipherScope, type SecretCipher } from '../encryption.js';
import { addressableIdProblem } from '../addressable-id.js';
import { timestamp } from '../identifiers.js';
import type { Database } from '../sql/database.js';
import { migrate } from '../sql/migrations.js';
import type { Component, TokenInfo } from '../types.js';
import { EmbeddedConfigStore } from './embedded-config-store.js';
import { checkMasterKey } from './master-key-check.js';
import { Repository } from './repository.js';

export const DEFAULT_PROJECT = 'default';
const LOCAL_TOKEN_DESCRIPTION = 'gex local access';

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * The embedded store: one database (SQLite file or PostgreSQL) holding projects, tokens, the
 * component registry and configurations. Created and migrated on first use.
 */
export class EmbeddedBackend {
  private constructor(
    readonly db: Database,
    private readonly cipher: SecretCipher,
    readonly location: string,
  ) {}

  /**
   * Migrates the database, checks that `cipher` holds the store's master key (`keySource` names
   * where it came from, for the error) and registers the built-in component. Closes `db` on failure.
   */
  static async open(db: Database, cipher: SecretCipher, location: string, keySource = 'the master key'): Promise<EmbeddedBackend> {
    try {
      await migrate(db);
      const backend = new EmbeddedBackend(db, cipher, location);
      await backend.transaction(async (repo) => {
        await checkMasterKey(repo, cipher, keySource);
        await repo.saveComponent(genericExtractorComponent(), true);
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
  async authenticate(token: string): Promise<TokenInfo | null> {
    const row = await this.db.get<Record<string, unknown>>(
      `SELECT t.id, t.description, t.read_only, t.created, t.internal, p.id AS project_id, p.name AS project_name
       FROM tokens t JOIN projects p ON p.id = t.project_id WHERE t.token_hash = ?`,
      [hashToken(token)],
    );
    if (!row || Number(row.internal) === 1) return null;
    return toTokenInfo(row);
  }

  changeMarker(): Promise<string | null> {
    return this.db.changeMarker();
  }

  session(token: TokenInfo): ConfigStore {
    return new EmbeddedConfigStore(this.db, this.cipher, token);
  }

  /** Access for the local CLI and runner (no token needed): an internal token of the project. */
  async localSession(project = DEFAULT_PROJECT): Promise<EmbeddedConfigStore> {
    const info = await this.db.transaction(async (tx) => {
      const repo = new Repository(tx, this.db.dialect);
      const projectId = await this.ensureProject(repo, tx, project);
      // the project's row lock makes concurrent first uses (many runners) create one internal token
      await tx.get(`SELECT id FROM projects WHERE id = ?${this.db.dialect.forUpdate}`, [projectId]);
      const existing = await tx.get<Record<string, unknown>>(
        `SELECT t.id, t.description, t.read_only, t.created, p.id AS project_id, p.name AS project_name
         FROM tokens t JOIN projects p ON p.id = t.project_id WHERE t.project_id = ? AND t.internal = 1`,
        [projectId],
      );
      if (existing) return toTokenInfo(existing);
      const id = await repo.nextSequence('token');
      const created = timestamp();
      await tx.run('INSERT INTO tokens (id, project_id, description, token_hash, read_only, internal, created) VALUES (?, ?, ?, ?, 0, 1, ?)', [
        id,
        projectId,
        LOCAL_TOKEN_DESCRIPTION,
        hashToken(randomBytes(32).toString('hex')),
        created,
      ]);
      return { id, description: LOCAL_TOKEN_DESCRIPTION, projectId, projectName: project, readOnly: false, created };
    });
    return new EmbeddedConfigStore(this.db, this.cipher, info);
  }

  /** The project's id; created when missing — by one of several processes doing it at once. */
  private async ensureProject(repo: Repository, tx: { get: Database['get']; run: Database['run'] }, name: string): Promise<number> {
    const row = await tx.get<{ id: number }>('SELECT id FROM projects WHERE name = ?', [name]);
    if (row) return Number(row.id);
    const id = await repo.nextSequence('project');
    // a concurrent creator's row wins (PostgreSQL waits for it, then skips); read back whichever exists
    await tx.run('INSERT INTO projects (id, name, created) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING', [id, name, timestamp()]);
    return Number((await tx.get<{ id: number }>('SELECT id FROM projects WHERE name = ?', [name]))!.id);
  }

  /** Creates a token of a project (created if missing); the token text is returned only here. */
  async createToken(options: { description: string; readOnly?: boolean; project?: string }): Promise<{ token: string; info: TokenInfo }> {
    if (!options.description) throw new UserError('A token needs a description (--description)');
    return this.db.transaction(async (tx) => {
      const repo = new Repository(tx, this.db.dialect);
      const project = options.project ?? DEFAULT_PROJECT;
      const projectId = await this.ensureProject(repo, tx, project);
      const id = await repo.nextSequence('token');
      const token = `${projectId}-${id}-${randomBytes(30).toString('base64url')}`;
      const created = timestamp();
      await tx.run('INSERT INTO tokens (id, project_id, description, token_hash, read_only, internal, created) VALUES (?, ?, ?, ?, ?, 0, ?)', [
        id,
        projectId,
        options.description,
        hashToken(token),
        options.readOnly ? 1 : 0,
        created,
      ]);
      return { token, info: { id, description: options.description, projectId, projectName: project, readOnly: Boolean(options.readOnly), created } };
    });
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
    if (!Array.isArray(list)) throw new UserError('Components must be a JSON array of component objects');
    const components = list.map((item, i) => {
      const id = isJsonObject(item) ? item.get('id') : undefined;
      const type = isJsonObject(item) ? item.get('type') : undefined;
      if (!isJsonObject(item) || typeof id !== 'string' || id === '' || typeof type !== 'string' || type === '') {
        throw new UserError(`Component [${i}] needs at least a non-empty string "id" and "type"`);
      }
      const idProblem = addressableIdProblem(id);
      if (idProblem) throw new UserError(`Component [${i}]: its id ${idProblem}`);
      return { id, type, name: phpToString(item.get('name') ?? id), definition: item };
    });
    await this.transaction(async (repo) => {
      for (const c of components) {
        const previous = (await repo.loadComponent(c.id))?.definition;
        await repo.saveComponent({ ...c, definition: this.cipher.encryptTree(c.definition, componentCipherScope(c.id), previous) }, false);
      }
    });
    return components.map((c) => c.id);
  }

  /** Plaintext of the `#` values of a registered component's part — for the runner only, in memory. */
  decryptComponentSecrets(componentId: string, value: JsonValue): JsonValue {
    return this.cipher.decryptTree(value, componentCipherScope(componentId));
  }

  /** Plaintext of the `#` values of a stored body — for the runner only, in memory. */
  decryptSecrets(projectId: number, componentId: string, value: JsonValue): JsonValue {
    return this.cipher.decryptTree(value, cipherScope(projectId, componentId));
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

function toTokenInfo(row: Record<string, unknown>): TokenInfo {
  return {
    id: Number(row.id),
    description: String(row.description),
    projectId: Number(row.project_id),
    projectName: String(row.project_name),
    readOnly: Number(row.read_only) === 1,
    created: String(row.created),
  };
}
