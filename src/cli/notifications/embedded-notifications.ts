import type { Logger } from '../../common/logger.js';
import { SUBSCRIPTION_SECRETS } from '../../jobs/job-queue.js';
import type { NotificationSettings } from '../../jobs/job-platform.js';
import { NotificationOutbox, type DeliveryRecord } from '../../jobs/notifications/notification-outbox.js';
import type { AttemptOutcome } from '../../jobs/notifications/notification-payload.js';
import { NotificationSender } from '../../jobs/notifications/notification-sender.js';
import type { SubscriptionInput } from '../../jobs/notifications/subscription-input.js';
import { SubscriptionRepository, type SubscriptionRecord } from '../../jobs/notifications/subscription-repository.js';
import type { EmbeddedBackend } from '../../store/embedded/embedded-backend.js';
import type { TokenInfo } from '../../store/types.js';
import {
  shownRecipient,
  subscriptionIdArg,
  subscriptionNotFound,
  type DeliveryView,
  type NotificationsBackend,
  type SubscriptionView,
} from './notifications-backend.js';

function view(s: SubscriptionRecord): SubscriptionView {
  return {
    id: String(s.id),
    event: s.event,
    filters: s.filters,
    recipient: shownRecipient(s.recipient),
    created: s.created,
  };
}

function deliveryView(d: DeliveryRecord): DeliveryView {
  return {
    id: String(d.id),
    subscriptionId: String(d.subscriptionId),
    event: d.event,
    jobId: String(d.jobId),
    status: d.status,
    created: d.created,
    nextAttempt: d.nextAttempt,
    attempts: d.attempts,
  };
}

/** The Notification API's subscriptions and deliveries of a project of the embedded store. */
export class EmbeddedNotifications implements NotificationsBackend {
  private constructor(
    private readonly backend: EmbeddedBackend,
    private readonly token: TokenInfo,
    private readonly logger: Logger,
    /** the delivery settings a sample is sent with (the SMTP relay), read when one is */
    private readonly settings: () => NotificationSettings,
  ) {}

  static async open(
    backend: EmbeddedBackend,
    project: string | undefined,
    logger: Logger,
    settings: () => NotificationSettings,
  ): Promise<EmbeddedNotifications> {
    const store = await backend.localSession(project);
    return new EmbeddedNotifications(backend, await store.verifyToken(), logger, settings);
  }

  private get subscriptions(): SubscriptionRepository {
    return new SubscriptionRepository(this.backend.db, this.backend.projectSecrets(SUBSCRIPTION_SECRETS));
  }

  async add(input: SubscriptionInput): Promise<{ subscription: SubscriptionView; signingSecret: string | null }> {
    const { subscription, signingSecret } = await this.subscriptions.create(this.token.projectId, input);
    return { subscription: view(subscription), signingSecret };
  }

  async list(): Promise<SubscriptionView[]> {
    return (await this.subscriptions.list(this.token.projectId)).map(view);
  }

  async remove(id: string): Promise<void> {
    if (!(await this.subscriptions.remove(this.token.projectId, Number(subscriptionIdArg(id)))))
      throw subscriptionNotFound(id);
  }

  async test(id: string): Promise<AttemptOutcome> {
    const found = await this.subscriptions.get(this.token.projectId, Number(subscriptionIdArg(id)));
    if (!found) throw subscriptionNotFound(id);
    // the relay is read for an e-mail only: a webhook's sample needs no SMTP settings
    const settings = found.recipient.channel === 'email' ? this.settings() : {};
    if (found.recipient.channel === 'email' && !settings.email)
      return {
        outcome: 'final',
        statusCode: null,
        message: 'no SMTP relay: set GEX_SMTP_URL and GEX_SMTP_FROM for this command (and on every server and worker)',
      };
    const sender = new NotificationSender({
      outbox: new NotificationOutbox(this.backend.db),
      subscriptions: this.subscriptions,
      logger: this.logger,
      ...settings,
    });
    try {
      const outcome = await sender.sendSample(this.token.projectId, Number(id));
      if (!outcome) throw subscriptionNotFound(id);
      return outcome;
    } finally {
      // never started: this closes the SMTP channel
      await sender.stop();
    }
  }

  async deliveries(options: { subscriptionId?: string; limit: number }): Promise<DeliveryView[]> {
    const subscriptionId =
      options.subscriptionId === undefined
        ? undefined
        : Number(subscriptionIdArg(options.subscriptionId, '--subscription'));
    const list = await new NotificationOutbox(this.backend.db).deliveries(this.token.projectId, {
      subscriptionId,
      limit: options.limit,
    });
    return list.map(deliveryView);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
