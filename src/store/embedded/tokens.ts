import { createHash, randomBytes } from 'node:crypto';
import { UserError } from '../../common/errors.js';
import { timestamp } from '../identifiers.js';
import type { Database } from '../sql/database.js';
import type { TokenInfo } from '../types.js';
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
    await repo.insertToken({ id, projectId, description: LOCAL_TOKEN_DESCRIPTION, tokenHash, readOnly: false, internal: true, created });
    return { id, description: LOCAL_TOKEN_DESCRIPTION, projectId, projectName: project, readOnly: false, created };
  });
}

/** Creates a token of a project (created if missing); the token text is returned only here. */
export async function createToken(db: Database, options: { description: string; readOnly?: boolean; project?: string }): Promise<{ token: string; info: TokenInfo }> {
  if (!options.description) throw new UserError('A token needs a description (--description)');
  return db.transaction(async (tx) => {
    const repo = new Repository(tx, db.dialect);
    const project = options.project ?? DEFAULT_PROJECT;
    const projectId = await ensureProject(repo, project);
    const id = await repo.nextSequence('token');
    const token = `${projectId}-${id}-${randomBytes(30).toString('base64url')}`;
    const created = timestamp();
    const readOnly = Boolean(options.readOnly);
    await repo.insertToken({ id, projectId, description: options.description, tokenHash: hashToken(token), readOnly, internal: false, created });
    return { token, info: { id, description: options.description, projectId, projectName: project, readOnly, created } };
  });
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
