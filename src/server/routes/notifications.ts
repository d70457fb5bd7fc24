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
import type { DeliveryRecord, NotificationOutbox } from '../../jobs/notifications/notification-outbox.js';
import type { NotificationSender } from '../../jobs/notifications/notification-sender.js';

/** The delivery side the routes read (records) and use (a sample sent now). */
export interface NotificationDeliveries {
  outbox: Pick<NotificationOutbox, 'deliveries'>;
  sender: Pick<NotificationSender, 'sendSample'>;
}

/** records one answer lists at most (older ones: `?before=` the last id) */
const MAX_DELIVERIES = 1000;

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

function deliveryToWire(d: DeliveryRecord): JsonObject {
  return new Map<string, JsonValue>([
    ['id', String(d.id)],
    ['subscriptionId', String(d.subscriptionId)],
    ['event', d.event],
    ['jobId', String(d.jobId)],
    ['deliveryId', d.deliveryId],
    ['status', d.status],
    ['createdAt', d.created],
    ['endedAt', d.ended],
    ['nextAttemptAt', d.nextAttempt],
    [
      'attempts',
      d.attempts.map(
        (a) =>
          new Map<string, JsonValue>([
            ['attempt', a.attempt],
            ['startedAt', a.started],
            ['durationMs', a.durationMs],
            ['outcome', a.outcome],
            ['statusCode', a.statusCode],
            ['message', a.message],
          ]),
      ),
    ],
  ]);
}

/** `?limit=` (1–1000, default 100) and `?before=` (an event id) of a deliveries list; bad ones refused. */
function pageOf(query: Record<string, string | undefined>): { limit: number; before?: number } {
  const limit = query.limit === undefined ? 100 : Number(query.limit);
  if (!/^\d{1,4}$/.test(query.limit ?? '100') || limit < 1 || limit > MAX_DELIVERIES)
    throw StoreError.keboola(
      KEBOOLA_ERRORS.notificationValidation,
      `Invalid request: limit: expected a whole number from 1 to ${MAX_DELIVERIES}, not ${excerptQuoted(query.limit ?? '')}`,
    );
  if (query.before === undefined) return { limit };
  if (!/^\d{1,15}$/.test(query.before))
    throw StoreError.keboola(
      KEBOOLA_ERRORS.notificationValidation,
      `Invalid request: before: expected a delivery id (a whole number), not ${excerptQuoted(query.before)}`,
    );
  return { limit, before: Number(query.before) };
}

/**
 * Keboola's Notification API (docs/notifications.md) at the server's origin, with the Storage API's
 * tokens: subscriptions belong to the token's project; another project's are not found.
 */
export function notificationRoutes(
  app: FastifyInstance,
  subscriptions: SubscriptionRepository,
  deliveries?: NotificationDeliveries,
): void {
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

  if (!deliveries) return;

  // gex's additions: what was sent and how each attempt ended, and a sample sent now
  app.get<{ Querystring: Record<string, string | undefined> }>('/notification-deliveries', async (request, reply) => {
    const page = pageOf(request.query);
    const sub = request.query.subscriptionId;
    const subscriptionId = sub === undefined ? undefined : idParam(sub);
    const list = await deliveries.outbox.deliveries(sessionOf(request).token.projectId, { ...page, subscriptionId });
    return sendJson(reply, 200, list.map(deliveryToWire));
  });

  app.post<{ Params: { id: string } }>('/project-subscriptions/:id/test', async (request, reply) => {
    const { token } = sessionOf(request);
    writer(token);
    const outcome = await deliveries.sender.sendSample(token.projectId, idParam(request.params.id));
    if (!outcome) throw notFound(request.params.id);
    return sendJson(
      reply,
      200,
      new Map<string, JsonValue>([
        ['outcome', outcome.outcome],
        ['statusCode', outcome.statusCode],
        ['message', outcome.message],
      ]),
    );
  });
}
