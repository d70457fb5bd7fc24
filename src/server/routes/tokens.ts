import type { FastifyInstance } from 'fastify';
import type { JsonObject, JsonValue } from '../../php-compat/index.js';
import type { TokenInfo } from '../../store/types.js';
import { sessionOf } from '../auth.js';
import { sendJson } from '../reply.js';

/** The subset of Keboola's token object (storage-api.md §2.4) that gex's tokens can fill. */
export function tokenToWire(token: TokenInfo): JsonObject {
  return new Map<string, JsonValue>([
    ['id', String(token.id)],
    ['created', token.created],
    ['description', token.description],
    ['isMasterToken', false],
    ['canManageBuckets', !token.readOnly],
    ['canManageTokens', false],
    ['canReadAllFileUploads', false],
    ['canPurgeTrash', false],
    ['expires', null],
    ['isExpired', false],
    ['isDisabled', false],
    ['bucketPermissions', new Map()],
    ['componentAccess', []],
    ['organization', new Map([['id', '1']])],
    ['owner', new Map([['id', String(token.projectId)], ['name', token.projectName]])],
  ]);
}

/** `GET …/tokens/verify` */
export function tokenRoutes(app: FastifyInstance): void {
  app.get('/tokens/verify', async (request, reply) => sendJson(reply, 200, tokenToWire(sessionOf(request).token)));
}
