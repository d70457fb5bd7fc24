import type { FastifyInstance } from 'fastify';
import { configMetadataToWire } from '../../store/wire/configurations.js';
import { sessionOf } from '../auth.js';
import { metadataInput } from '../http/input.js';
import { sendJson, sendNoContent } from '../http/reply.js';
import type { ConfigParams, MetadataParams } from './params.js';

/** Configuration metadata (docs/storage-api.md#metadata) — registered in the branch form only, as in Keboola. */
export function metadataRoutes(app: FastifyInstance): void {
  const base = '/components/:componentId/configs/:configId/metadata';

  app.post<{ Params: ConfigParams }>(base, async (request, reply) => {
    const { componentId, configId } = request.params;
    const list = await sessionOf(request).store.addMetadata(componentId, configId, metadataInput(request.body));
    return sendJson(reply, 201, list.map(configMetadataToWire));
  });

  app.get<{ Params: ConfigParams }>(base, async (request, reply) => {
    const { componentId, configId } = request.params;
    return sendJson(
      reply,
      200,
      (await sessionOf(request).store.listMetadata(componentId, configId)).map(configMetadataToWire),
    );
  });

  app.delete<{ Params: MetadataParams }>(`${base}/:metadataId`, async (request, reply) => {
    const { componentId, configId, metadataId } = request.params;
    await sessionOf(request).store.deleteMetadata(componentId, configId, metadataId);
    return sendNoContent(reply);
  });
}
