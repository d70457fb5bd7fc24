import { UserError } from '../../common/errors.js';
import { displayId } from '../../common/log-text.js';
import type { AttemptOutcome } from '../../jobs/notifications/notification-payload.js';
import { maskedUrl, type Recipient, type SubscriptionInput } from '../../jobs/notifications/subscription-input.js';

/** A subscription as `gex notifications` shows it, from the store or a server's Notification API. */
export interface SubscriptionView {
  id: string;
  event: string;
  filters: Array<{ field: string; operator: string; value: string | number | boolean }>;
  /** a webhook's URL with its query values hidden (shown), an e-mail address as it is */
  recipient: Recipient;
  created: string;
}

/** One event and its attempts, newest event first. */
export interface DeliveryView {
  id: string;
  subscriptionId: string;
  event: string;
  jobId: string;
  status: string;
  created: string;
  nextAttempt: string | null;
  attempts: Array<{
    attempt: number;
    started: string;
    durationMs: number;
    outcome: string;
    statusCode: number | null;
    message: string;
  }>;
}

/** Where `gex notifications` works: the embedded store, or a server's Notification API. */
export interface NotificationsBackend {
  /** stores a checked subscription; a webhook's signing secret is returned here only */
  add(input: SubscriptionInput): Promise<{ subscription: SubscriptionView; signingSecret: string | null }>;
  list(): Promise<SubscriptionView[]>;
  remove(id: string): Promise<void>;
  /** sends a sample of the subscription's event to its recipient now: how the attempt ended */
  test(id: string): Promise<AttemptOutcome>;
  deliveries(options: { subscriptionId?: string; limit: number }): Promise<DeliveryView[]>;
  close(): Promise<void>;
}

/** A subscription id as typed: a number, else a usage error (never sent anywhere). */
export function subscriptionIdArg(id: string, option = 'A subscription id'): string {
  if (!/^\d{1,15}$/.test(id))
    throw new UserError(
      'GEX_CLI_USAGE',
      `${option} is a number (gex notifications list shows them), got ${displayId(id.slice(0, 40))}`,
    );
  return id;
}

export function subscriptionNotFound(id: string, cause?: unknown): UserError {
  return new UserError('GEX_STORE_NOT_FOUND', `Subscription ${id} not found (gex notifications list shows them)`, {
    cause,
  });
}

/** A webhook URL as every output shows it: its query values and fragment hidden (a secret may be there). */
export function shownUrl(url: string): string {
  try {
    return maskedUrl(url);
  } catch {
    return '[not a URL]';
  }
}

/** A recipient as shown: the URL masked whatever the source (a server may answer with it whole). */
export function shownRecipient(recipient: Recipient): Recipient {
  return recipient.channel === 'webhook' ? { channel: 'webhook', url: shownUrl(recipient.url) } : recipient;
}
