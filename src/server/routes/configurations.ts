import type { FastifyInstance } from 'fastify';
import { StoreError } from '../../store/store-error.js';
import { configurationToWire } from '../../store/wire/configurations.js';
import { sessionOf } from '../auth.js';
import { createConfigurationInput, stateInput, updateConfigurationInput } from '../http/input.js';
import { isDeletedParam, type Query } from '../http/query.js';
import { sendCachedJson, sendJson, sendNoContent } from '../http/reply.js';
import type { ComponentParams, ConfigParams } from './params.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/** Configurations of a component: list, create, detail, update, state, trash/purge, restore. */
export function configurationRoutes(app: FastifyInstance): void {
  const base = '/components/:componentId/configs';

  app.get<{ Params: ComponentParams; Querystring: Query }>(base, async (request, reply) => {
    return sendCachedJson(request, reply, async () => {
      const list = await sessionOf(request).store.listConfigurations(request.params.componentId, {
        isDeleted: isDeletedParam(request.query),
      });
      return list.map((c) => configurationToWire(c));
    });
  });

  app.post<{ Params: ComponentParams }>(base, async (request, reply) => {
    const created = await sessionOf(request).store.createConfiguration(
      request.params.componentId,
      createConfigurationInput(request.body),
    );
    return sendJson(reply, 201, configurationToWire(created));
  });

  app.put<{ Params: ComponentParams }>(base, async () => {
    throw StoreError.validation(
      'The configuration id is missing in the URL: update with PUT …/components/{componentId}/configs/{configurationId}.',
    );
  });

  app.get<{ Params: ConfigParams }>(`${base}/:configId`, async (request, reply) => {
    const { componentId, configId } = request.params;
    return sendCachedJson(request, reply, async () =>
      configurationToWire(await sessionOf(request).store.getConfiguration(componentId, configId)),
    );
  });

  app.put<{ Params: ConfigParams }>(`${base}/:configId`, async (request, reply) => {
    const { componentId, configId } = request.params;
    const updated = await sessionOf(request).store.updateConfiguration(
      componentId,
      configId,
      updateConfigurationInput(request.body),
    );
    return sendJson(reply, 200, configurationToWire(updated));
  });

  app.put<{ Params: ConfigParams }>(`${base}/:configId/state`, async (request, reply) => {
    const { componentId, configId } = request.params;
    const updated = await sessionOf(request).store.updateConfigurationState(
      componentId,
      configId,
      stateInput(request.body, 'configuration'),
    );
    return sendJson(reply, 200, configurationToWire(updated));
  });

  app.delete<{ Params: ConfigParams }>(`${base}/:configId`, async (request, reply) => {
    await sessionOf(request).store.deleteConfiguration(request.params.componentId, request.params.configId);
    return sendNoContent(reply);
  });

  app.post<{ Params: ConfigParams }>(`${base}/:configId/restore`, async (request, reply) => {
    const { componentId, configId } = request.params;
    return sendJson(
      reply,
      200,
      configurationToWire(await sessionOf(request).store.restoreConfiguration(componentId, configId)),
    );
  });

  // docs/storage-api.md#where-gex-chooses: copies a configuration back from the default branch into a dev branch
  app.post<{ Params: ConfigParams }>(`${base}/:configId/reset-to-default`, async () => {
    throw StoreError.keboola(
      KEBOOLA_ERRORS.notImplemented,
      'Reset to default branch is not implemented for default branch: gex has only the default branch, so there is nothing to reset from.',
    );
  });
}
