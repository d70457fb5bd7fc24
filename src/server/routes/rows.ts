import type { FastifyInstance } from 'fastify';
import { StoreError } from '../../store/store-error.js';
import { rowToWire } from '../../store/wire/configurations.js';
import { sessionOf } from '../auth.js';
import { changeDescriptionInput, createRowInput, stateInput, updateRowInput } from '../http/input.js';
import { queryValue, type Query } from '../http/query.js';
import { sendCachedJson, sendJson, sendNoContent } from '../http/reply.js';
import type { ConfigParams, RowParams } from './params.js';

/** Rows of a configuration: list, create, detail, update, state, delete (docs/storage-api.md#rows). */
export function rowRoutes(app: FastifyInstance): void {
  const base = '/components/:componentId/configs/:configId/rows';

  app.get<{ Params: ConfigParams }>(base, async (request, reply) => {
    const { componentId, configId } = request.params;
    return sendCachedJson(request, reply, async () =>
      (await sessionOf(request).store.listRows(componentId, configId)).map((r) => rowToWire(r)),
    );
  });

  app.post<{ Params: ConfigParams }>(base, async (request, reply) => {
    const { componentId, configId } = request.params;
    return sendJson(
      reply,
      201,
      rowToWire(await sessionOf(request).store.createRow(componentId, configId, createRowInput(request.body))),
    );
  });

  app.put<{ Params: ConfigParams }>(base, async () => {
    throw StoreError.validation(
      'The row id is missing in the URL: update with PUT …/configs/{configurationId}/rows/{rowId}.',
    );
  });

  app.get<{ Params: RowParams }>(`${base}/:rowId`, async (request, reply) => {
    const { componentId, configId, rowId } = request.params;
    return sendCachedJson(request, reply, async () =>
      rowToWire(await sessionOf(request).store.getRow(componentId, configId, rowId)),
    );
  });

  app.put<{ Params: RowParams }>(`${base}/:rowId`, async (request, reply) => {
    const { componentId, configId, rowId } = request.params;
    return sendJson(
      reply,
      200,
      rowToWire(await sessionOf(request).store.updateRow(componentId, configId, rowId, updateRowInput(request.body))),
    );
  });

  app.put<{ Params: RowParams }>(`${base}/:rowId/state`, async (request, reply) => {
    const { componentId, configId, rowId } = request.params;
    return sendJson(
      reply,
      200,
      rowToWire(
        await sessionOf(request).store.updateRowState(componentId, configId, rowId, stateInput(request.body, 'row')),
      ),
    );
  });

  // the PHP client sends changeDescription in the DELETE body; a query parameter works as well
  app.delete<{ Params: RowParams; Querystring: Query }>(`${base}/:rowId`, async (request, reply) => {
    const { componentId, configId, rowId } = request.params;
    const changeDescription =
      changeDescriptionInput(request.body) ?? (queryValue(request.query, 'changeDescription') || undefined);
    await sessionOf(request).store.deleteRow(componentId, configId, rowId, changeDescription);
    return sendNoContent(reply);
  });
}
