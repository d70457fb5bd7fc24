import type { FastifyInstance } from 'fastify';
import { sessionOf } from '../auth.js';
import { previewCsv, previewJson } from '../preview-body.js';
import type { Query } from '../query.js';
import { sendCachedJson, sendJson, sendNoContent } from '../reply.js';
import { pathTableId, requireWriteAccess, tableCall } from '../table-errors.js';
import { flagParam, previewParams } from '../table-params.js';
import { tableToWire } from '../table-wire.js';
import { bucketObjects, sendFinishedJob } from './buckets.js';

interface TableParams {
  tableId: string;
}

/** Tables: the project's list, detail, data preview, delete. */
export function tableRoutes(app: FastifyInstance): void {
  app.get('/tables', async (request, reply) =>
    sendCachedJson(
      request,
      reply,
      async () =>
        tableCall(async () => {
          const { buckets, tables } = await bucketObjects(request);
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

  // bounded (at most 1000 rows, one query): it never holds the database for long
  app.get<{ Params: TableParams; Querystring: Query }>('/tables/:tableId/data-preview', async (request, reply) => {
    const id = pathTableId(request.params.tableId);
    const { query, format } = previewParams(request.query);
    const preview = await tableCall(() => sessionOf(request).tables.preview(id, query));
    if (format === 'json') return sendJson(reply, 200, previewJson(preview));
    return reply.code(200).header('content-type', 'text/csv; charset=utf-8').send(previewCsv(preview));
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
