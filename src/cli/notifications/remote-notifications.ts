import { UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { fromPlain, isJsonObject, isList, JsonFloat, type JsonObject, type JsonValue } from '../../json/index.js';
import type { AttemptOutcome } from '../../jobs/notifications/notification-payload.js';
import type { Recipient, SubscriptionInput } from '../../jobs/notifications/subscription-input.js';
import type { GivenToken } from '../../store/remote/api-index.js';
import { NotificationApiClient } from '../../store/remote/notification-api-client.js';
import { StoreError } from '../../store/store-error.js';
import {
  shownRecipient,
  subscriptionIdArg,
  subscriptionNotFound,
  type DeliveryView,
  type NotificationsBackend,
  type SubscriptionView,
} from './notifications-backend.js';

function text(value: JsonValue | undefined): string {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' ? String(value) : '';
}

function num(value: JsonValue | undefined): number | null {
  const v = value instanceof JsonFloat ? value.value : typeof value === 'bigint' ? Number(value) : value;
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function refused(what: string): UserError {
  return new UserError('GEX_STORAGE_API_REFUSED', `The Notification API answered with no ${what}.`);
}

function recipientOf(value: JsonValue | undefined): Recipient {
  if (isJsonObject(value)) {
    const channel = value.get('channel');
    if (channel === 'webhook') return shownRecipient({ channel, url: text(value.get('url')) });
    if (channel === 'email') return { channel, address: text(value.get('address')) };
  }
  throw refused('recipient of a subscription');
}

/** A subscription object of Keboola's Notification API as `gex notifications` shows it; refused when malformed. */
function viewOf(value: JsonValue): SubscriptionView {
  if (!isJsonObject(value) || text(value.get('id')) === '') throw refused('subscription object');
  const filters = value.get('filters');
  return {
    id: text(value.get('id')),
    event: text(value.get('event')),
    filters: (isList(filters) ? filters : []).filter(isJsonObject).map((f) => {
      const raw = f.get('value');
      const number = num(raw);
      return {
        field: text(f.get('field')),
        operator: text(f.get('operator')) || '==',
        value: typeof raw === 'boolean' ? raw : (number ?? text(raw)),
      };
    }),
    recipient: recipientOf(value.get('recipient')),
    created: text(value.get('createdAt')),
  };
}

function deliveryOf(value: JsonValue): DeliveryView {
  if (!isJsonObject(value) || text(value.get('id')) === '') throw refused('delivery object');
  const attempts = value.get('attempts');
  return {
    id: text(value.get('id')),
    subscriptionId: text(value.get('subscriptionId')),
    event: text(value.get('event')),
    jobId: text(value.get('jobId')),
    status: text(value.get('status')),
    created: text(value.get('createdAt')),
    nextAttempt: text(value.get('nextAttemptAt')) || null,
    attempts: (isList(attempts) ? attempts : []).filter(isJsonObject).map((a) => ({
      attempt: num(a.get('attempt')) ?? 0,
      started: text(a.get('startedAt')),
      durationMs: num(a.get('durationMs')) ?? 0,
      outcome: text(a.get('outcome')),
      statusCode: num(a.get('statusCode')),
      message: text(a.get('message')),
    })),
  };
}

function outcomeOf(value: JsonObject): AttemptOutcome {
  const outcome = value.get('outcome');
  if (outcome !== 'delivered' && outcome !== 'retry' && outcome !== 'final') throw refused('outcome of the test');
  return { outcome, statusCode: num(value.get('statusCode')), message: text(value.get('message')) };
}

/** The subscriptions and deliveries of a server's project, through its Notification API. */
export class RemoteNotifications implements NotificationsBackend {
  private constructor(
    private readonly api: NotificationApiClient,
    private readonly url: string,
  ) {}

  static async open(
    url: string,
    token: GivenToken,
    env: NodeJS.ProcessEnv,
    logger?: Logger,
  ): Promise<RemoteNotifications> {
    return new RemoteNotifications(await NotificationApiClient.open(url, token, env, logger), url);
  }

  /** A 404 of a call naming subscription `id`: not found, said as the embedded store says it. */
  private async about<T>(id: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof StoreError && error.status === 404) throw subscriptionNotFound(id, error);
      throw error;
    }
  }

  async add(input: SubscriptionInput): Promise<{ subscription: SubscriptionView; signingSecret: string | null }> {
    const answer = await this.api.create(fromPlain(input) as JsonObject);
    const secret = answer.get('signingSecret');
    return { subscription: viewOf(answer), signingSecret: typeof secret === 'string' ? secret : null };
  }

  async list(): Promise<SubscriptionView[]> {
    return (await this.api.list()).map(viewOf);
  }

  async remove(id: string): Promise<void> {
    subscriptionIdArg(id);
    await this.about(id, () => this.api.remove(id));
  }

  async test(id: string): Promise<AttemptOutcome> {
    subscriptionIdArg(id);
    return outcomeOf(await this.about(id, () => this.api.test(id)));
  }

  async deliveries(options: { subscriptionId?: string; limit: number }): Promise<DeliveryView[]> {
    if (options.subscriptionId !== undefined) subscriptionIdArg(options.subscriptionId, '--subscription');
    try {
      return (await this.api.deliveries(options)).map(deliveryOf);
    } catch (error) {
      // a Keboola stack's Notification API keeps no delivery records (gex serve's addition)
      if (error instanceof StoreError && error.status === 404)
        throw new UserError(
          'GEX_STORE_NOT_IMPLEMENTED',
          `The Notification API at ${this.url} keeps no delivery records (GET /notification-deliveries is gex serve's)`,
          { cause: error },
        );
      throw error;
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
