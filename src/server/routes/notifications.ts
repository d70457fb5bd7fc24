import type { FastifyInstance } from 'fastify';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';
import { excerptQuoted } from '../../common/log-text.js';
import type { JsonObject, JsonValue } from '../../json/index.js';
import { subscriptionInput } from '../../jobs/notifications/subscription-input.js';
import type { SubscriptionRecord, SubscriptionRepository } from '../../jobs/notifications/subscription-repository.js';
import { StoreError } from '../../store/store-error.js';
import { sessionOf } from '../auth.js';
import { errorHandler } from '../errors/errors.js';
import { sendJson, sendNoContent } from '../http/reply.js';
import { QUEUE_BODY_LIMIT } from './queue.js';

function notFound(text: string): StoreError {
  return StoreError.keboola(KEBOOLA_ERRORS.notificationNotFound, `Subscription ${excerptQuoted(text)} not found.`);
}

function idParam(text: string): number {
  if (!/^\d{1,15}$/.test(text)) throw notFound(text);
  return Number(text);
}

function writer(token: { readOnly: boolean }): void {
  if (token.readOnly) throw StoreError.accessDenied('A read-only token cannot change notification subscriptions.');
}

/** Keboola's subscription shape: ids as strings, every filter with its operator. */
function toWire(s: SubscriptionRecord): JsonObject {
  return new Map<string, JsonValue>([
    ['id', String(s.id)],
    ['event', s.event],
    ['filters', s.filters.map((f) => new Map<string, JsonValue>(Object.entries(f)))],
    ['recipient', new Map<string, JsonValue>(Object.entries(s.recipient))],
    ['createdAt', s.created],
  ]);
}

/**
 * Keboola's Notification API (docs/notifications.md) at the server's origin, with the Storage API's
 * tokens: subscriptions belong to the token's project; another project's are not found.
 */
export function notificationRoutes(app: FastifyInstance, subscriptions: SubscriptionRepository): void {
  app.setErrorHandler(errorHandler(QUEUE_BODY_LIMIT, 'service'));

  app.post<{ Body: JsonValue | undefined }>(
    '/project-subscriptions',
    { bodyLimit: QUEUE_BODY_LIMIT },
    async (request, reply) => {
      const { token } = sessionOf(request);
      writer(token);
      const input = subscriptionInput(request.body);
      const { subscription, signingSecret } = await subscriptions.create(token.projectId, input);
      const body = toWire(subscription);
      // shown here only: list and detail never answer with it
      if (signingSecret !== null) body.set('signingSecret', signingSecret);
      return sendJson(reply, 201, body);
    },
  );

  app.get('/project-subscriptions', async (request, reply) => {
    const list = await subscriptions.list(sessionOf(request).token.projectId);
    return sendJson(reply, 200, list.map(toWire));
  });

  app.get<{ Params: { id: string } }>('/project-subscriptions/:id', async (request, reply) => {
    const found = await subscriptions.get(sessionOf(request).token.projectId, idParam(request.params.id));
    if (!found) throw notFound(request.params.id);
    return sendJson(reply, 200, toWire(found));
  });

  app.delete<{ Params: { id: string } }>('/project-subscriptions/:id', async (request, reply) => {
    const { token } = sessionOf(request);
    writer(token);
    if (!(await subscriptions.remove(token.projectId, idParam(request.params.id)))) throw notFound(request.params.id);
    return sendNoContent(reply);
  });
}
