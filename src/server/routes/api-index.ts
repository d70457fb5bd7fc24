import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { JsonObject, JsonValue } from '../../json/index.js';
import { componentToWire } from '../../store/wire/components.js';
import type { ServerBackend } from '../backend.js';
import { commaList, queryValue, type Query } from '../http/query.js';
import { sendJson } from '../http/reply.js';
import { absoluteUri } from '../../store/wire/absolute-uri.js';

const DOCUMENTATION = 'https://keboola.docs.apiary.io/';

/** Keboola's `urlTemplates`: addresses its UI builds from ids (gex has no UI; clients read the keys). */
export const URL_TEMPLATES = {
  orchestrationJob: '/admin/projects/{projectId}/orchestrations/{orchestrationId}/jobs/{jobId}',
} as const;

/** Keys kept by `exclude=componentDetails` (apiary's list, docs/storage-api.md#where-gex-chooses). */
const COMPONENT_SUMMARY_KEYS = [
  'id',
  'name',
  'type',
  'ico64',
  'ico128',
  'features',
  'flags',
  'description',
  'categories',
];

function summary(component: JsonObject): JsonObject {
  return new Map([...component].filter(([key]) => COMPONENT_SUMMARY_KEYS.includes(key)));
}

/** `GET /v2/storage` — the API index (docs/storage-api.md#resources) with every registered component; public, no token. */
export function apiIndexRoutes(
  app: FastifyInstance,
  backend: ServerBackend,
  revision: string,
  services: readonly string[] = [],
): void {
  app.get<{ Querystring: Query }>('/', async (request, reply) => {
    const exclude = new Set(commaList(queryValue(request.query, 'exclude') ?? ''));
    const index: JsonObject = new Map<string, JsonValue>([
      ['api', 'storage'],
      ['version', 'v2'],
      ['revision', revision],
      ['host', hostname()],
      ['documentation', DOCUMENTATION],
    ]);
    if (!exclude.has('components')) {
      const components = (await backend.listComponents()).map((c) => componentToWire(c));
      index.set('components', exclude.has('componentDetails') ? components.map(summary) : components);
    }
    // the Job Queue, Scheduler and Notification APIs are served at this server's origin (clients look them up here)
    const origin = absoluteUri(request, '');
    index.set(
      'services',
      services.map(
        (id) =>
          new Map<string, JsonValue>([
            ['id', id],
            ['url', origin],
          ]),
      ),
    );
    index.set('features', []);
    index.set('urlTemplates', new Map(Object.entries(URL_TEMPLATES)));
    return sendJson(reply, 200, index);
  });
}
