import type { FastifyInstance, FastifyRequest } from 'fastify';
import { excerptId } from '../../common/log-text.js';
import type { JsonObject, JsonValue } from '../../json/index.js';
import { StoreError } from '../../store/store-error.js';
import type { TokenInfo } from '../../store/types.js';
import { absoluteUri } from '../../store/wire/absolute-uri.js';
import { sessionOf, tokenOf, type Session } from '../auth.js';
import type { ServerBackend } from '../backend.js';
import { sendJson, sendNoContent } from '../http/reply.js';
import { tokenCreateInput } from '../http/token-input.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/** Keboola's absolute token address. */
function tokenUri(request: FastifyRequest, id: number): string {
  return absoluteUri(request, `/v2/storage/tokens/${id}`);
}

/**
 * The subset of Keboola's token object (docs/storage-api.md#tokens-and-projects) that gex's tokens can fill.
 * `secret` is the token text: only verify (the caller's own text), create and refresh (the new
 * text, shown this once) pass it; lists and details never carry it (gex stores only hashes).
 */
export function tokenToWire(token: TokenInfo, uri: string, secret?: string): JsonObject {
  const wire = new Map<string, JsonValue>([
    ['id', String(token.id)],
    ['created', token.created],
    ['refreshed', token.refreshed ?? token.created],
    ['description', token.description],
    ['uri', uri],
  ]);
  if (secret !== undefined) wire.set('token', secret);
  const entries: Array<[string, JsonValue]> = [
    ['isMasterToken', token.canManageTokens],
    ['canManageBuckets', !token.readOnly],
    ['canManageTokens', token.canManageTokens],
    ['canReadAllFileUploads', false],
    // every token that may write may also purge trashed configurations (the second delete)
    ['canPurgeTrash', !token.readOnly],
    ['expires', null],
    ['isExpired', false],
    ['isDisabled', false],
    ['bucketPermissions', new Map()],
  ];
  for (const [key, value] of entries) wire.set(key, value);
  if (token.creator)
    wire.set(
      'creatorToken',
      new Map<string, JsonValue>([
        ['id', token.creator.id],
        ['description', token.creator.description],
      ]),
    );
  wire.set('componentAccess', []);
  wire.set('organization', new Map([['id', '1']]));
  wire.set(
    'owner',
    new Map([
      ['id', String(token.projectId)],
      ['name', token.projectName],
      // Keboola names its cloud here (aws, azure, gcp): "gex" tells a client that files go to this server
      ['fileStorageProvider', 'gex'],
    ]),
  );
  // gex's own: a runner token receives its project's secrets decrypted (POST /v2/storage/gex/decrypt)
  wire.set('gexRunner', token.runner);
  return wire;
}

/**
 * Keboola's verify of a master token names its administrator (`admin`, before `organization`; the
 * Go SDK and UI read it to tell a master token): gex's master tokens are their own administrator —
 * the token's id and description, role `admin`, no features, no organization membership.
 */
function withAdmin(wire: JsonObject, token: TokenInfo): JsonObject {
  if (!token.canManageTokens) return wire;
  const admin = new Map<string, JsonValue>([
    ['id', token.id],
    ['name', token.description],
    ['features', []],
    ['isOrganizationMember', false],
    ['role', 'admin'],
  ]);
  const entries = [...wire];
  const at = entries.findIndex(([key]) => key === 'organization');
  entries.splice(at < 0 ? entries.length : at, 0, ['admin', admin]);
  return new Map(entries);
}

/** Token management needs a master token (docs/storage-api.md#token-management). */
function requireMaster(session: Session, what: string): void {
  if (!session.token.canManageTokens) {
    throw StoreError.accessDenied(
      `Only a master token may ${what}. This token is not one; the store's operator makes master tokens with "gex tokens create --master".`,
    );
  }
}

/** A token id from the URL: one that cannot exist is not found. */
function tokenIdParam(text: string): number {
  if (!/^[1-9]\d{0,14}$/.test(text))
    throw StoreError.keboola(
      KEBOOLA_ERRORS.tokensNotFound,
      `Token ${excerptId(text)} not found: a token id is a number, as GET /v2/storage/tokens lists them.`,
    );
  return Number(text);
}

function tokenNotFound(id: number): StoreError {
  return StoreError.keboola(KEBOOLA_ERRORS.tokensNotFound, `Token ${id} not found in this project.`);
}

interface TokenParams {
  tokenId: string;
}

/**
 * `GET …/tokens/verify` for every token; Keboola's token management for master tokens: list,
 * create, detail, refresh, delete — always within the caller's project. A token may read and
 * refresh itself (Keboola: refresh "can be executed by all tokens").
 */
export function tokenRoutes(app: FastifyInstance, backend: Pick<ServerBackend, 'tokens'>): void {
  app.get('/tokens/verify', async (request, reply) => {
    const { token } = sessionOf(request);
    // requireToken authenticated exactly this text, so it is the caller's own token
    const secret = tokenOf(request) ?? '';
    return sendJson(reply, 200, withAdmin(tokenToWire(token, tokenUri(request, token.id), secret), token));
  });

  app.get('/tokens', async (request, reply) => {
    const session = sessionOf(request);
    requireMaster(session, 'list tokens');
    const tokens = await backend.tokens(session.token).list();
    return sendJson(
      reply,
      200,
      tokens.map((t) => tokenToWire(t, tokenUri(request, t.id))),
    );
  });

  app.post('/tokens', async (request, reply) => {
    const session = sessionOf(request);
    requireMaster(session, 'create tokens');
    const input = tokenCreateInput(request.body);
    const creator = { id: session.token.id, description: session.token.description };
    const { token, info } = await backend.tokens(session.token).create({ ...input, creator });
    return sendJson(reply, 201, tokenToWire(info, tokenUri(request, info.id), token));
  });

  app.get<{ Params: TokenParams }>('/tokens/:tokenId', async (request, reply) => {
    const session = sessionOf(request);
    const id = tokenIdParam(request.params.tokenId);
    if (id !== session.token.id) requireMaster(session, 'read other tokens');
    const token = await backend.tokens(session.token).get(id);
    if (!token) throw tokenNotFound(id);
    return sendJson(reply, 200, tokenToWire(token, tokenUri(request, id)));
  });

  app.post<{ Params: TokenParams }>('/tokens/:tokenId/refresh', async (request, reply) => {
    const session = sessionOf(request);
    const id = tokenIdParam(request.params.tokenId);
    const own = id === session.token.id;
    if (!own) requireMaster(session, 'refresh other tokens');
    const refreshed = await backend.tokens(session.token).refresh(id, (target) => {
      // another admin's token is theirs to rotate: refreshing it would lock them out
      if (!own && target.canManageTokens)
        throw StoreError.accessDenied(
          `Token ${id} is a master token: only it can refresh itself ("gex tokens revoke" removes it).`,
        );
      // the new text of a runner token would give the master token the plaintext of every secret
      if (!own && target.runner)
        throw StoreError.accessDenied(
          `Token ${id} is a runner token: only it can refresh itself (DELETE /v2/storage/tokens/${id} or "gex tokens revoke" removes it).`,
        );
    });
    if (!refreshed) throw tokenNotFound(id);
    return sendJson(reply, 200, tokenToWire(refreshed.info, tokenUri(request, id), refreshed.token));
  });

  app.delete<{ Params: TokenParams }>('/tokens/:tokenId', async (request, reply) => {
    const session = sessionOf(request);
    requireMaster(session, 'delete tokens');
    const id = tokenIdParam(request.params.tokenId);
    const deleted = await backend.tokens(session.token).delete(id, (target) => {
      if (target.canManageTokens) {
        throw StoreError.keboola(
          KEBOOLA_ERRORS.cannotDeleteMasterToken,
          `Token ${id} is a master token: master tokens are not deleted over HTTP; the store's operator revokes them with "gex tokens revoke ${id}".`,
        );
      }
    });
    if (!deleted) throw tokenNotFound(id);
    return sendNoContent(reply);
  });
}
