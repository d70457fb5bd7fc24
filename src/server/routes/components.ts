import type { FastifyInstance } from 'fastify';
import { StoreError } from '../../store/store-error.js';
import { componentToWire } from '../../store/wire/components.js';
import { configurationToWire } from '../../store/wire/configurations.js';
import { sessionOf } from '../auth.js';
import type { ServerBackend } from '../backend.js';
import { componentTypeParam, isDeletedParam, listIncludeParam, type Query } from '../http/query.js';
import { sendJson } from '../http/reply.js';
import type { ComponentParams } from './params.js';

/** `GET /v2/storage/components/:componentId` — public: no token needed (docs/storage-api.md#tokens-and-projects). */
export function publicComponentRoute(app: FastifyInstance, backend: ServerBackend): void {
  app.get<{ Params: ComponentParams }>('/components/:componentId', async (request, reply) => {
    const component = await backend.getComponent(request.params.componentId);
    if (!component) throw StoreError.notFound(`Component ${request.params.componentId} not found`);
    return sendJson(reply, 200, componentToWire(component));
  });
}

/** `GET B/components/:componentId` — the same detail, with a token. */
export function componentDetailRoute(app: FastifyInstance): void {
  app.get<{ Params: ComponentParams }>('/components/:componentId', async (request, reply) => {
    const component = await sessionOf(request).store.getComponent(request.params.componentId);
    return sendJson(reply, 200, componentToWire(component));
  });
}

/**
 * `GET …/components?include=&componentType=&isDeleted=` — components having matching
 * configurations, each configuration shaped by `include` (docs/storage-api.md#endpoints).
 */
export function componentListRoute(app: FastifyInstance): void {
  app.get<{ Querystring: Query }>('/components', async (request, reply) => {
    const include = listIncludeParam(request.query);
    const list = await sessionOf(request).store.listComponents({
      componentType: componentTypeParam(request.query),
      isDeleted: isDeletedParam(request.query),
    });
    const shape = {
      configuration: include.has('configuration'),
      rows: include.has('rows'),
      state: include.has('state'),
    };
    return sendJson(
      reply,
      200,
      list.map(({ component, configurations }) =>
        componentToWire(
          component,
          configurations.map((c) => configurationToWire(c, shape)),
        ),
      ),
    );
  });
}
