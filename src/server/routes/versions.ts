import type { FastifyInstance } from 'fastify';
import { configurationToWire, versionDetailToWire, versionItemToWire } from '../../store/wire/configurations.js';
import { sessionOf } from '../auth.js';
import { changeDescriptionInput, copyConfigurationInput } from '../http/input.js';
import { versionListParams, versionParam, type Query } from '../http/query.js';
import { sendJson } from '../http/reply.js';
import type { ConfigParams, ConfigVersionParams } from './params.js';

/** Configuration versions: list, detail, rollback, copy (docs/storage-api.md#versions). */
export function versionRoutes(app: FastifyInstance): void {
  const base = '/components/:componentId/configs/:configId/versions';

  app.get<{ Params: ConfigParams; Querystring: Query }>(base, async (request, reply) => {
    const { componentId, configId } = request.params;
    const versions = await sessionOf(request).store.listConfigurationVersions(
      componentId,
      configId,
      versionListParams(request.query),
    );
    return sendJson(reply, 200, versions.map(versionItemToWire));
  });

  app.get<{ Params: ConfigVersionParams }>(`${base}/:version`, async (request, reply) => {
    const { componentId, configId, version } = request.params;
    return sendJson(
      reply,
      200,
      versionDetailToWire(
        await sessionOf(request).store.getConfigurationVersion(componentId, configId, versionParam(version)),
      ),
    );
  });

  app.post<{ Params: ConfigVersionParams }>(`${base}/:version/rollback`, async (request, reply) => {
    const { componentId, configId, version } = request.params;
    const result = await sessionOf(request).store.rollbackConfiguration(
      componentId,
      configId,
      versionParam(version),
      changeDescriptionInput(request.body),
    );
    return sendJson(reply, 201, new Map([['version', result.version]]));
  });

  // the response is the whole new configuration: a superset of Keboola's `{"id": …}` (docs/storage-api.md#where-gex-chooses)
  app.post<{ Params: ConfigVersionParams }>(`${base}/:version/create`, async (request, reply) => {
    const { componentId, configId, version } = request.params;
    const copy = await sessionOf(request).store.copyConfiguration(
      componentId,
      configId,
      versionParam(version),
      copyConfigurationInput(request.body),
    );
    return sendJson(reply, 201, configurationToWire(copy));
  });
}
