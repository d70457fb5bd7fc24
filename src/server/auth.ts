import type { FastifyRequest } from 'fastify';
import type { ConfigStore } from '../store/config-store.js';
import { StoreError } from '../store/store-error.js';
import type { TokenInfo } from '../store/types.js';
import type { ServerBackend } from './backend.js';

/**
 * Token authentication (storage-api.md §2): `X-StorageApi-Token` (header names are
 * case-insensitive; Node lower-cases them), or `Authorization: Bearer <token>` as the PHP client's
 * bearer mode sends it. Read-only tokens pass here; the store refuses their writes (403).
 */

export interface Session {
  token: TokenInfo;
  store: ConfigStore;
}

const sessions = new WeakMap<FastifyRequest, Session>();

export function tokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers['x-storageapi-token'];
  const token = (Array.isArray(header) ? header[0] : header)?.trim();
  if (token) return token;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  return bearer?.[1];
}

/** onRequest hook of the token-protected routes. */
export function requireToken(backend: ServerBackend) {
  return async (request: FastifyRequest): Promise<void> => {
    const text = tokenOf(request);
    if (!text) throw new StoreError(401, '', 'Access token must be set');
    const token = await backend.authenticate(text);
    if (!token) throw new StoreError(401, 'storage.tokenInvalid', 'Invalid access token');
    sessions.set(request, { token, store: backend.session(token) });
  };
}

/** The session of an authenticated request. */
export function sessionOf(request: FastifyRequest): Session {
  const session = sessions.get(request);
  if (!session) throw new Error(`No token session for ${request.method} ${request.url}: the route is registered outside the token-protected scope`);
  return session;
}
