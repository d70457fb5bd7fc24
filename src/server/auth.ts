import type { FastifyRequest } from 'fastify';
import type { ConfigStore } from '../store/config-store.js';
import { StoreError } from '../store/store-error.js';
import type { ProjectFiles } from '../store/files/project-files.js';
import type { ProjectTables, StorageJobs } from '../store/tables/index.js';
import type { TokenInfo } from '../store/types.js';
import type { ServerBackend, StorageJobScope } from './backend.js';
import type { ReadCache } from './operations/read-cache.js';
import { KEBOOLA_ERRORS } from '../common/keboola-errors.js';

/**
 * Token authentication (docs/storage-api.md#tokens-and-projects): `X-StorageApi-Token` (header names are
 * case-insensitive; Node lower-cases them), or `Authorization: Bearer <token>` as the PHP client's
 * bearer mode sends it. Read-only tokens pass here; the store refuses their writes (403).
 */

export interface Session {
  token: TokenInfo;
  store: ConfigStore;
  /** the project's Storage tables and finished jobs */
  tables: ProjectTables;
  storageJobs: StorageJobs;
  files: ProjectFiles;
  /** the project's tables and files for a Storage job (close after it) */
  storageJobScope: () => StorageJobScope;
  /** shared by all sessions: entries are keyed by token */
  reads: ReadCache;
}

const sessions = new WeakMap<FastifyRequest, Session>();

export function tokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers['x-storageapi-token'];
  const token = (Array.isArray(header) ? header[0] : header)?.trim();
  if (token) return token;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  return bearer?.[1];
}

/**
 * How a scope words a missing token: the Storage API's "Access token must be set", or the Job
 * Queue and Scheduler APIs' "Invalid access token" (their clients expect it for a missing token too).
 */
export type TokenWording = 'storage' | 'service';

/** onRequest hook of the token-protected routes. */
export function requireToken(backend: ServerBackend, reads: ReadCache, wording: TokenWording = 'storage') {
  return async (request: FastifyRequest): Promise<void> => {
    const text = tokenOf(request);
    if (!text)
      throw wording === 'storage'
        ? new StoreError(401, '', 'Access token must be set')
        : StoreError.keboola(KEBOOLA_ERRORS.tokenInvalid, KEBOOLA_ERRORS.tokenInvalid.message);
    // unknown tokens are looked up every time: guessing must not fill the cache
    const token = await reads.value(
      `token ${text}`,
      () => backend.authenticate(text),
      (found) => (found ? 512 : null),
    );
    if (!token) throw StoreError.keboola(KEBOOLA_ERRORS.tokenInvalid, KEBOOLA_ERRORS.tokenInvalid.message);
    sessions.set(request, {
      token,
      store: backend.session(token),
      tables: backend.tables(token),
      storageJobs: backend.storageJobs(token),
      files: backend.files(token),
      storageJobScope: () =>
        backend.forStorageJob?.(token) ?? {
          tables: backend.tables(token),
          files: backend.files(token),
          close: async () => undefined,
        },
      reads,
    });
  };
}

/** The id of the token a request was authenticated with; undefined before or without authentication. */
export function tokenIdOf(request: FastifyRequest): number | undefined {
  return sessions.get(request)?.token.id;
}

/** The session of an authenticated request. */
export function sessionOf(request: FastifyRequest): Session {
  const session = sessions.get(request);
  if (!session)
    throw new Error(
      `No token session for ${request.method} ${request.routeOptions.url ?? 'an unmatched route'}: the route is registered outside the token-protected scope`,
    );
  return session;
}
