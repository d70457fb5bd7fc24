import { createHash, randomBytes } from 'node:crypto';
import { UserError } from '../../common/errors.js';
import { timestamp } from '../identifiers.js';
import type { Database } from '../sql/database.js';
import type { TokenInfo, TokenRef } from '../types.js';
import { Repository } from './repository.js';

/** Projects and their tokens: only a token's hash is stored; the token text is shown once, on creation. */

export const DEFAULT_PROJECT = 'default';
const LOCAL_TOKEN_DESCRIPTION = 'gex local access';

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The token's identity, or null for an unknown token (or a project's internal one). */
export async function authenticate(db: Database, token: string): Promise<TokenInfo | null> {
  const found = await new Repository(db, db.dialect).tokenByHash(hashToken(token));
  return found && !found.internal ? found.info : null;
}

/** The project's internal token, for local access without a token (CLI, runner); made on first use. */
export function localToken(db: Database, project: string): Promise<TokenInfo> {
  return db.transaction(async (tx) => {
    const repo = new Repository(tx, db.dialect);
    const projectId = await ensureProject(repo, project);
    // the project's row lock makes concurrent first uses (many runners) create one internal token
    await repo.lockProject(projectId);
    const existing = await repo.internalTokenOf(projectId);
    if (existing) return existing;
    const id = await repo.nextSequence('token');
    const created = timestamp();
    const tokenHash = hashToken(randomBytes(32).toString('hex'));
    await repo.insertToken({
      id,
      projectId,
      description: LOCAL_TOKEN_DESCRIPTION,
      tokenHash,
      readOnly: false,
      internal: true,
      canManageTokens: false,
      runner: false,
      created,
      creator: null,
    });
    return {
      id,
      description: LOCAL_TOKEN_DESCRIPTION,
      projectId,
      projectName: project,
      readOnly: false,
      canManageTokens: false,
      runner: false,
      created,
    };
  });
}

/** Longest token description (characters): room for any note, no room for a megabyte in every list. */
export const MAX_TOKEN_DESCRIPTION_LENGTH = 1000;

export interface CreateTokenOptions {
  description: string;
  readOnly?: boolean;
  /** a master token: may manage the project's tokens over HTTP */
  canManageTokens?: boolean;
  /**
   * a runner token: may also receive the project's secrets decrypted (POST /v2/storage/gex/decrypt),
   * for a run elsewhere. Only the store's operator makes one; it is read-write and never master.
   */
  runner?: boolean;
  /** the project's name (created if missing; default "default") */
  project?: string;
  /** the token that creates it over HTTP */
  creator?: TokenRef;
}

/** The secret of token `id`: the project and token ids (for people reading logs of their own systems) and 240 random bits. */
function newSecret(projectId: number, id: number): string {
  return `${projectId}-${id}-${randomBytes(30).toString('base64url')}`;
}

/** Creates a token of a project (created if missing); the token text is returned only here. */
export async function createToken(
  db: Database,
  options: CreateTokenOptions,
): Promise<{ token: string; info: TokenInfo }> {
  if (typeof options.description !== 'string')
    throw new UserError('GEX_STORE_INVALID_REQUEST', 'A token description must be text.');
  if (options.description.length > MAX_TOKEN_DESCRIPTION_LENGTH) {
    throw new UserError(
      'GEX_STORE_INVALID_REQUEST',
      `A token description may have at most ${MAX_TOKEN_DESCRIPTION_LENGTH} characters; this one has ${options.description.length}.`,
    );
  }
  if (options.description.includes('\u0000'))
    throw new UserError('GEX_STORE_INVALID_REQUEST', 'A token description cannot contain a NUL character.');
  const readOnly = Boolean(options.readOnly);
  const canManageTokens = Boolean(options.canManageTokens);
  const runner = Boolean(options.runner);
  if (readOnly && canManageTokens)
    throw new UserError(
      'GEX_STORE_INVALID_REQUEST',
      'A read-only token cannot be a master token: a master token creates and deletes tokens.',
    );
  // one duty per token: a runner runs (reads, saves state, loads tables), a master manages tokens
  if (runner && (readOnly || canManageTokens))
    throw new UserError(
      'GEX_STORE_INVALID_REQUEST',
      `A runner token cannot be ${readOnly ? 'read-only: a run saves state and loads tables' : 'a master token: a master token manages tokens and never sees a secret, a runner token runs'}.`,
    );
  return db.transaction(async (tx) => {
    const repo = new Repository(tx, db.dialect);
    const project = options.project ?? DEFAULT_PROJECT;
    const projectId = await ensureProject(repo, project);
    const id = await repo.nextSequence('token');
    const token = newSecret(projectId, id);
    const created = timestamp();
    const creator = options.creator ? { id: options.creator.id, description: options.creator.description } : null;
    await repo.insertToken({
      id,
      projectId,
      description: options.description,
      tokenHash: hashToken(token),
      readOnly,
      internal: false,
      canManageTokens,
      runner,
      created,
      creator,
    });
    const info: TokenInfo = {
      id,
      description: options.description,
      projectId,
      projectName: project,
      readOnly,
      canManageTokens,
      runner,
      created,
      ...(creator ? { creator } : {}),
    };
    return { token, info };
  });
}

/**
 * The tokens of one project as its master tokens manage them over HTTP (docs/storage-api.md#tokens-and-projects):
 * every call sees only this project's tokens, never the internal one.
 */
export class ProjectTokens {
  constructor(
    private readonly db: Database,
    private readonly projectId: number,
    private readonly projectName: string,
  ) {}

  list(): Promise<TokenInfo[]> {
    return this.db.transaction((tx) => new Repository(tx, this.db.dialect).listTokens(this.projectId), {
      readOnly: true,
    });
  }

  /** The token, or undefined when the project has no token `id`. */
  get(id: number): Promise<TokenInfo | undefined> {
    return this.db.transaction((tx) => new Repository(tx, this.db.dialect).projectToken(this.projectId, id), {
      readOnly: true,
    });
  }

  /**
   * A token of this project that is neither a master nor a runner token: over HTTP no token can
   * give another what it may not have itself, nor the plaintext of secrets.
   */
  create(options: {
    description: string;
    readOnly: boolean;
    creator: TokenRef;
  }): Promise<{ token: string; info: TokenInfo }> {
    return createToken(this.db, { ...options, canManageTokens: false, runner: false, project: this.projectName });
  }

  /**
   * A new secret for token `id` (the old one stops working at once); undefined when the project has
   * no such token. `allow` sees the token first and may refuse by throwing: nothing changes then.
   */
  refresh(
    id: number,
    allow: (token: TokenInfo) => void = () => undefined,
  ): Promise<{ token: string; info: TokenInfo } | undefined> {
    return this.db.transaction(async (tx) => {
      const repo = new Repository(tx, this.db.dialect);
      const existing = await repo.projectToken(this.projectId, id, { lock: true });
      if (!existing) return undefined;
      allow(existing);
      const token = newSecret(this.projectId, id);
      const refreshed = timestamp();
      await repo.replaceTokenHash(id, hashToken(token), refreshed);
      return { token, info: { ...existing, refreshed } };
    });
  }

  /** Deletes token `id` unless `allow` refuses it (by throwing); false when the project has no such token. */
  delete(id: number, allow: (token: TokenInfo) => void = () => undefined): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const repo = new Repository(tx, this.db.dialect);
      const existing = await repo.projectToken(this.projectId, id, { lock: true });
      if (!existing) return false;
      allow(existing);
      return repo.deleteToken(id);
    });
  }
}

/** The project's id; created when missing — by one of several processes doing it at once. */
async function ensureProject(repo: Repository, name: string): Promise<number> {
  const known = await repo.projectIdByName(name);
  if (known !== undefined) return known;
  const id = await repo.nextSequence('project');
  // a concurrent creator's row wins (PostgreSQL waits for it, then skips); read back whichever exists
  await repo.insertProjectUnlessNamed({ id, name, created: timestamp() });
  return (await repo.projectIdByName(name))!;
}
