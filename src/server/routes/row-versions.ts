import type { FastifyInstance } from 'fastify';
import { rowToWire, rowVersionToWire } from '../../store/wire/configurations.js';
import { sessionOf } from '../auth.js';
import { changeDescriptionInput, copyRowInput } from '../http/input.js';
import { versionListParams, versionParam, type Query } from '../http/query.js';
import { sendJson } from '../http/reply.js';
import type { RowParams, RowVersionParams } from './params.js';

/** Row versions: list, detail, rollback, copy (docs/storage-api.md#versions). */
export function rowVersionRoutes(app: FastifyInstance): void {
  const base = '/components/:componentId/configs/:configId/rows/:rowId/versions';

  app.get<{ Params: RowParams; Querystring: Query }>(base, async (request, reply) => {
    const { componentId, configId, rowId } = request.params;
    const versions = await sessionOf(request).store.listRowVersions(
      componentId,
      configId,
      rowId,
      versionListParams(request.query),
    );
    return sendJson(reply, 200, versions.map(rowVersionToWire));
  });

  app.get<{ Params: RowVersionParams }>(`${base}/:version`, async (request, reply) => {
    const { componentId, configId, rowId, version } = request.params;
    return sendJson(
      reply,
      200,
      rowVersionToWire(
        await sessionOf(request).store.getRowVersion(componentId, configId, rowId, versionParam(version)),
      ),
    );
  });

  app.post<{ Params: RowVersionParams }>(`${base}/:version/rollback`, async (request, reply) => {
    const { componentId, configId, rowId, version } = request.params;
    const row = await sessionOf(request).store.rollbackRow(
      componentId,
      configId,
      rowId,
      versionParam(version),
      changeDescriptionInput(request.body),
    );
    return sendJson(reply, 201, rowToWire(row));
  });

  app.post<{ Params: RowVersionParams }>(`${base}/:version/create`, async (request, reply) => {
    const { componentId, configId, rowId, version } = request.params;
    const row = await sessionOf(request).store.copyRow(
      componentId,
      configId,
      rowId,
      versionParam(version),
      copyRowInput(request.body),
    );
    return sendJson(reply, 201, rowToWire(row));
  });
}
