import type { FastifyInstance } from 'fastify';
import { isJsonObject, type JsonValue } from '../../json/index.js';
import { requireAddressableId } from '../../store/addressable-id.js';
import { MAX_REVEAL_CIPHERS, requireRunner, type RevealRequest } from '../../store/secret-reveal.js';
import { StoreError } from '../../store/store-error.js';
import { sessionOf } from '../auth.js';
import type { ServerBackend } from '../backend.js';
import { sendJson } from '../http/reply.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

const CODE = KEBOOLA_ERRORS.decryptValidation.code;

function invalid(field: string, problem: string): StoreError {
  return StoreError.validation(`Invalid parameters - ${field}: ${problem}`, CODE);
}

/** `{"componentId", "scope": "project"|"component", "ciphers": [...]}`, each part checked; no value is ever quoted back. */
function revealInput(body: unknown): RevealRequest {
  if (!isJsonObject(body))
    throw StoreError.validation(
      'The request body must be a JSON object: {"componentId": "…", "scope": "project", "ciphers": ["KBC::ProjectSecure::…"]}.',
      CODE,
    );
  const componentId = body.get('componentId');
  if (typeof componentId !== 'string' || componentId === '')
    throw invalid('componentId', 'the id of the component whose configuration the ciphers belong to (text).');
  requireAddressableId(componentId, 'componentId', CODE);
  const scope = body.get('scope');
  if (scope !== 'project' && scope !== 'component')
    throw invalid(
      'scope',
      '"project" (ciphers of configurations, rows and states) or "component" (of the component registry).',
    );
  const ciphers: JsonValue | undefined = body.get('ciphers');
  if (!Array.isArray(ciphers) || ciphers.some((c) => typeof c !== 'string'))
    throw invalid('ciphers', 'a list of cipher texts (strings).');
  if (ciphers.length > MAX_REVEAL_CIPHERS)
    throw invalid('ciphers', `at most ${MAX_REVEAL_CIPHERS} per request, got ${ciphers.length}; send them in parts.`);
  return { componentId, scope, ciphers: ciphers as string[] };
}

/**
 * `POST /v2/storage/gex/decrypt`, gex's own (docs/security.md#who-sees-a-secret): a runner token
 * gets the plaintext of its project's ciphers (null for one that does not decrypt as its
 * project's), so a run elsewhere needs no master key. Every other token gets 403. The answer is
 * never cached, here (sendJson, not the read cache) or anywhere (`Cache-Control: no-store`), and
 * nothing of a request's values reaches a log or an error.
 */
export function secretRoutes(app: FastifyInstance, backend: Pick<ServerBackend, 'revealSecrets'>): void {
  app.post('/gex/decrypt', async (request, reply) => {
    const { token } = sessionOf(request);
    if (!backend.revealSecrets)
      throw StoreError.keboola(KEBOOLA_ERRORS.notImplemented, 'This server does not decrypt secrets for runners.');
    // the token first: a token that may not read secrets learns nothing from the body's checks
    requireRunner(token);
    const values = backend.revealSecrets(token, revealInput(request.body));
    reply.header('cache-control', 'no-store');
    return sendJson(reply, 200, new Map([['values', values]]));
  });
}
