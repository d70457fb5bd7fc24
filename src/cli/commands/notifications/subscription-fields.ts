import { displayText } from '../../../common/log-text.js';
import { fromPlain, type JsonObject } from '../../../json/index.js';
import type { DeliveryView, SubscriptionView } from '../../notifications/notifications-backend.js';
import { fields } from '../../store-commands/store-command.js';

/** What `--json` shows of a subscription: the Notification API's shape (a webhook's URL masked). */
export function subscriptionFields(s: SubscriptionView): JsonObject {
  return fields({
    id: s.id,
    event: s.event,
    filters: fromPlain(s.filters),
    recipient: fromPlain(s.recipient),
    createdAt: s.created,
  });
}

/** A subscription's filters as one cell: `job.configuration.id == shop, …`, or `-` for none. */
export function filtersText(s: SubscriptionView): string {
  if (s.filters.length === 0) return '-';
  return displayText(s.filters.map((f) => `${f.field} ${f.operator} ${String(f.value)}`).join(', '));
}

export function recipientText(s: SubscriptionView): string {
  return displayText(s.recipient.channel === 'webhook' ? `webhook ${s.recipient.url}` : `email ${s.recipient.address}`);
}

/** What `deliveries --json` shows of an event: the API's shape. */
export function deliveryFields(d: DeliveryView): JsonObject {
  return fields({
    id: d.id,
    subscriptionId: d.subscriptionId,
    event: d.event,
    jobId: d.jobId,
    status: d.status,
    createdAt: d.created,
    nextAttemptAt: d.nextAttempt,
    attempts: d.attempts.map((a) =>
      fields({
        attempt: a.attempt,
        startedAt: a.started,
        durationMs: a.durationMs,
        outcome: a.outcome,
        statusCode: a.statusCode,
        message: a.message,
      }),
    ),
  });
}
