import type { FastifyInstance } from 'fastify';
import { sessionOf } from '../auth.js';
import type { Query } from '../http/query.js';
import { sendCachedJson, sendNoContent } from '../http/reply.js';
import { pathTableId, requireWriteAccess, tableCall } from '../errors/table-errors.js';
import { flagParam, previewParams } from '../storage/table-params.js';
import type { ByteBudget } from '../http/byte-budget.js';
import { preparePreview } from '../storage/table-preview.js';
import { tableToWire } from '../../store/wire/tables.js';
import { bucketObjects, includesColumnMetadata, sendFinishedJob } from './buckets.js';

interface TableParams {
  tableId: string;
}

/** How large data previews may be: one answer, and all answers the server holds at once. */
export interface PreviewBounds {
  maxBytes: number;
  budget: ByteBudget;
}

/** Tables: the project's list, detail, data preview, delete. */
export function tableRoutes(app: FastifyInstance, previews: PreviewBounds): void {
  app.get<{ Querystring: Query }>('/tables', async (request, reply) =>
    sendCachedJson(
      request,
      reply,
      async () =>
        tableCall(async () => {
          const { buckets, tables } = await bucketObjects(request, undefined, {
            columnMetadata: includesColumnMetadata(request.query),
          });
          return tables.map((t) => tableToWire(request, t, buckets.get(t.bucketId)!));
        }),
      { byHost: true },
    ),
  );

  app.get<{ Params: TableParams }>('/tables/:tableId', async (request, reply) => {
    const id = pathTableId(request.params.tableId);
    return sendCachedJson(
      request,
      reply,
      async () =>
        tableCall(async () => {
          const table = await sessionOf(request).tables.table(id);
          const { buckets } = await bucketObjects(request, table.bucketId);
          return tableToWire(request, table, buckets.get(table.bucketId)!);
        }),
      { byHost: true },
    );
  });

  // at most 1000 rows and previews.maxBytes, read in small batches between which other requests
  // are served, then streamed (table-preview.ts)
  app.get<{ Params: TableParams; Querystring: Query }>('/tables/:tableId/data-preview', async (request, reply) => {
    const id = pathTableId(request.params.tableId);
    const { query, format } = previewParams(request.query);
    const gone = new AbortController();
    const onClose = () => {
      if (!reply.raw.writableFinished) gone.abort();
    };
    reply.raw.once('close', onClose);
    const preview = await tableCall(() =>
      preparePreview({
        tables: sessionOf(request).tables,
        tableId: id,
        query,
        format,
        maxBytes: previews.maxBytes,
        budget: previews.budget,
        signal: gone.signal,
      }),
    );
    // a client gone while the answer was built: nothing will read the stream, so give its bytes back now
    if (gone.signal.aborted) preview.body.destroy();
    else reply.raw.once('close', () => preview.body.destroy());
    return reply
      .code(200)
      .header('content-type', preview.contentType)
      .header('content-length', String(preview.length))
      .send(preview.body);
  });

  app.delete<{ Params: TableParams; Querystring: Query }>('/tables/:tableId', async (request, reply) => {
    const session = sessionOf(request);
    requireWriteAccess(session);
    const id = pathTableId(request.params.tableId);
    const force = flagParam(request.query, 'force', false);
    const async = flagParam(request.query, 'async', false);
    await tableCall(() => session.tables.deleteTable(id));
    if (!async) return sendNoContent(reply);
    return sendFinishedJob(request, reply, { operationName: 'tableDrop', tableId: id, operationParams: { force } });
  });
}
