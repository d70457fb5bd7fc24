import type { FastifyInstance, FastifyRequest } from 'fastify';
import { displayId } from '../../common/log-text.js';
import { fromPlain, isJsonObject, toPlain, type JsonValue } from '../../json/index.js';
import { StoreError } from '../../store/store-error.js';
import type { MetadataTargetId } from '../../store/tables/index.js';
import { sessionOf } from '../auth.js';
import { sendCachedJson, sendJson, sendNoContent } from '../http/reply.js';
import { pathBucketId, pathTableId, requireWriteAccess, tableCall } from '../errors/table-errors.js';
import { columnMetadataToWire, metadataListToWire } from '../../store/wire/tables.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/**
 * Keboola's metadata of buckets, tables and columns (docs/storage-api.md#storage-metadata): list,
 * set by provider (`{provider, metadata: [{key, value}]}`, JSON or form), delete by id. A table's
 * call also takes `columnsMetadata`; its JSON answer is `{metadata, columnsMetadata}`, its form
 * answer the table's list (Keboola's older call). The store checks every item (metadata-input.ts).
 */

interface Params {
  id: string;
  metadataId?: string;
}

type Kind = 'buckets' | 'tables' | 'columns';

function targetOf(kind: Kind, id: string): MetadataTargetId {
  if (kind === 'buckets') return { bucketId: pathBucketId(id) };
  // a column id is a table id with the column after it: whatever cannot be one is not found
  return kind === 'tables' ? { tableId: pathTableId(id) } : { columnId: pathTableId(id) };
}

/** The body's fields as plain values (the store's checks read plain JSON). */
function fields(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (isJsonObject(body)) return toPlain(body) as Record<string, unknown>;
  if (Array.isArray(body) && body.length === 0) return {};
  throw StoreError.keboola(
    KEBOOLA_ERRORS.metadataInvalidParameter,
    'The request body must be an object such as {"provider": "my-component", "metadata": [{"key": "KBC.description", "value": "…"}]}.',
  );
}

/** A metadata id from the URL: Keboola's are numbers; anything else cannot name an item. */
function metadataIdParam(text: string | undefined): number {
  if (text === undefined || !/^\d{1,20}$/.test(text))
    throw StoreError.keboola(
      KEBOOLA_ERRORS.metadataInvalidId,
      `The metadata id ${displayId((text ?? '').slice(0, 100))} is not a number: use an id from GET …/metadata.`,
    );
  const id = Number(text);
  if (!Number.isSafeInteger(id))
    throw StoreError.keboola(KEBOOLA_ERRORS.metadataNotFound, `The supplied metadata ID was not found (${text}).`);
  return id;
}

/** Keboola's older table call is a form and answers with the table's list; the JSON one with both lists. */
const isForm = (request: FastifyRequest): boolean =>
  /^application\/x-www-form-urlencoded\b/i.test(request.headers['content-type'] ?? '');

export function storageMetadataRoutes(app: FastifyInstance): void {
  for (const kind of ['buckets', 'tables', 'columns'] as const) {
    const base = `/${kind}/:id/metadata`;

    app.get<{ Params: Params }>(base, async (request, reply) => {
      const target = targetOf(kind, request.params.id);
      return sendCachedJson(
        request,
        reply,
        async () => fromPlain(metadataListToWire(await tableCall(() => sessionOf(request).tables.metadata(target)))),
        { byHost: false },
      );
    });

    app.post<{ Params: Params }>(base, async (request, reply) => {
      const session = sessionOf(request);
      requireWriteAccess(session);
      const target = targetOf(kind, request.params.id);
      const body = fields(request.body);
      if ('tableId' in target) {
        const set = await tableCall(() =>
          session.tables.setTableMetadata(target.tableId, {
            provider: body.provider,
            metadata: body.metadata,
            columnsMetadata: body.columnsMetadata,
          }),
        );
        const list = fromPlain(metadataListToWire(set.metadata));
        if (isForm(request)) return sendJson(reply, 201, list);
        return sendJson(
          reply,
          201,
          new Map<string, JsonValue>([
            ['metadata', list],
            ['columnsMetadata', columnMetadataToWire(set.columns)],
          ]),
        );
      }
      const list = await tableCall(() => session.tables.setMetadata(target, body.provider, body.metadata));
      return sendJson(reply, 201, fromPlain(metadataListToWire(list)));
    });

    app.delete<{ Params: Params }>(`${base}/:metadataId`, async (request, reply) => {
      const session = sessionOf(request);
      requireWriteAccess(session);
      const target = targetOf(kind, request.params.id);
      const id = metadataIdParam(request.params.metadataId);
      await tableCall(() => session.tables.deleteMetadata(target, id));
      return sendNoContent(reply);
    });
  }
}
