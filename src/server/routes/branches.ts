import type { FastifyInstance } from 'fastify';
import type { JsonObject, JsonValue } from '../../json/index.js';
import { StoreError } from '../../store/store-error.js';
import { sessionOf } from '../auth.js';
import { sendJson } from '../http/reply.js';

/** gex has one branch per project: the default one, addressed as `default` or by its id. */
export const DEFAULT_BRANCH_ID = 1;

/** onRequest hook of the `/v2/storage/branch/:branchId/…` routes. */
export async function requireDefaultBranch(request: { params: unknown }): Promise<void> {
  const { branchId } = request.params as { branchId: string };
  if (branchId !== 'default' && branchId !== String(DEFAULT_BRANCH_ID)) {
    throw StoreError.notFound(
      `Branch ${branchId} not found. gex has no development branches: use /v2/storage/branch/default/… or /v2/storage/branch/${DEFAULT_BRANCH_ID}/….`,
    );
  }
}

/** `GET /v2/storage/dev-branches` — the default branch only (apiary's shape). */
export function branchRoutes(app: FastifyInstance): void {
  app.get('/dev-branches', async (request, reply) => {
    const branch: JsonObject = new Map<string, JsonValue>([
      ['id', DEFAULT_BRANCH_ID],
      ['name', 'Main'],
      ['description', ''],
      // gex keeps no branch records; the token's creation is the earliest date it can vouch for
      ['created', sessionOf(request).token.created],
      ['isDefault', true],
      ['creatorToken', []],
    ]);
    return sendJson(reply, 200, [branch]);
  });
}
