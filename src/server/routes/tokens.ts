import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { JsonObject, JsonValue } from '../../json/index.js';
import type { TokenInfo } from '../../store/types.js';
import { absoluteUri } from '../absolute-uri.js';
import { sessionOf, tokenOf } from '../auth.js';
import { sendJson } from '../reply.js';

/** Keboola's absolute token address. */
function tokenUri(request: FastifyRequest, id: number): string {
  return absoluteUri(request, `/v2/storage/tokens/${id}`);
}

/**
 * The subset of Keboola's token object (docs/storage-api.md#tokens-and-projects) that gex's tokens can fill.
 * `secret` is the token text itself: Keboola returns it to whoever verifies that very token, and
 * only the verify route passes it (the text the request authenticated with, never another token's).
 */
export function tokenToWire(token: TokenInfo, uri: string, secret: string): JsonObject {
  return new Map<string, JsonValue>([
    ['id', String(token.id)],
    ['created', token.created],
    // gex never refreshes (rotates) a token
    ['refreshed', token.created],
    ['description', token.description],
    ['uri', uri],
    ['token', secret],
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
  app.get('/tokens/verify', async (request, reply) => {
    const { token } = sessionOf(request);
    // requireToken authenticated exactly this text, so it is the caller's own token
    const secret = tokenOf(request) ?? '';
    return sendJson(reply, 200, tokenToWire(token, tokenUri(request, token.id), secret));
  });
}
