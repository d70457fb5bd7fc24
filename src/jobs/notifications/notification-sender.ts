import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import PQueue from 'p-queue';
import type { Logger } from '../../common/logger.js';
import { thisProcessText } from '../../common/process-liveness.js';
import { AttemptRecorder } from './attempt-recorder.js';
import type { NotificationOutbox, DueEvent } from './notification-outbox.js';
import type { AttemptOutcome, NotificationPayload } from './notification-payload.js';
import type { Recipient } from './subscription-input.js';
import type { SubscriptionRepository } from './subscription-repository.js';
import { sendWebhook } from './webhook-sender.js';

/** Sends an e-mail notification (EmailSender over the operator's SMTP relay). */
export interface EmailChannel {
  send(address: string, payload: NotificationPayload, signal?: AbortSignal): Promise<AttemptOutcome>;
  close(): Promise<void>;
}

/** What an attempt counted as, for the job metrics. */
export type AttemptCount = 'sent' | 'failed' | 'retrying';

export interface NotificationSenderOptions {
  outbox: NotificationOutbox;
  subscriptions: SubscriptionRepository;
  logger: Logger;
  /** the SMTP relay; absent: an e-mail event fails at once, saying how to configure one */
  email?: EmailChannel;
  /** the console's origin for links to a job's page (`--public-url`); absent: no link */
  publicUrl?: string;
  /** attempts in flight at once in this process (default DEFAULT_CONCURRENCY) */
  concurrency?: number;
  /** how often the outbox is looked at without being told (other processes' job ends, retries due) */
  pollMs?: number;
  /** a webhook attempt's whole time (default WEBHOOK_TIMEOUT_MS) */
  webhookTimeoutMs?: number;
  onAttempt?: (channel: Recipient['channel'], counted: AttemptCount) => void;
  now?: () => Date;
}

const DEFAULT_POLL_MS = 500;
/** attempts in flight at once: 32 receivers answering in 50 ms are 640 deliveries a second */
export const DEFAULT_CONCURRENCY = 32;
/** how long a stop waits for attempts in flight before cutting them (they are retried) */
const STOP_WAIT_MS = 5000;

/** The console's page of job `id` under `publicUrl`. */
export function jobPageUrl(publicUrl: string, id: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/console/jobs/${encodeURIComponent(id)}`;
}

/**
 * Delivers the outbox's events: every server and worker runs one, so whichever is alive sends.
 * Told at once of its own process's job ends (`wake`), it also polls for the rest and for retries
 * due. An event is taken with a lease (NotificationOutbox.take); each attempt is recorded with
 * the event's next state. A process killed mid-attempt leaves its events due again when their
 * lease ends: at most one extra delivery of what was in flight, nothing lost.
 */
export class NotificationSender {
  private readonly queue: PQueue;
  private readonly concurrency: number;
  private readonly abort = new AbortController();
  private readonly sender = thisProcessText();
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<void> | undefined;
  private again = false;
  /** the last look filled every free slot: more may be due, so freed slots are filled again */
  private backlog = false;
  private stopped = false;
  private publicUrl: string | undefined;

  private readonly recorder: AttemptRecorder;

  constructor(private readonly options: NotificationSenderOptions) {
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.recorder = new AttemptRecorder(options.outbox, () => this.now());
    this.publicUrl = options.publicUrl;
    this.queue = new PQueue({ concurrency: this.concurrency });
    // a backlog is drained at the recipients' pace, not one batch per poll: once half the slots are
    // free, a look fills them (a take per few attempts, not per attempt)
    this.queue.on('next', () => {
      if (this.backlog && this.queue.pending <= this.concurrency / 2) this.wake();
    });
    // every attempt in flight listens to the one stop signal
    setMaxListeners(Math.max(10, this.concurrency + 2), this.abort.signal);
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  start(): void {
    this.timer = setInterval(() => this.wake(), this.options.pollMs ?? DEFAULT_POLL_MS);
    this.timer.unref();
    this.wake();
  }

  /** Looks at the outbox now (once more after the look in progress, if one is). */
  wake(): void {
    if (this.stopped) return;
    if (this.looking) {
      this.again = true;
      return;
    }
    this.looking = this.look()
      .catch((error: unknown) => this.options.logger.warn(`Notifications: ${(error as Error).message}`))
      .finally(() => {
        this.looking = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Takes as many due events as there is room for and starts their attempts. */
  private async look(): Promise<void> {
    for (;;) {
      const room = this.concurrency - this.queue.size - this.queue.pending;
      if (room <= 0 || this.stopped) return;
      const due = await this.options.outbox.take(room, this.now());
      this.backlog = due.length === room;
      for (const event of due) void this.queue.add(() => this.attempt(event));
      if (due.length < room) return;
      await this.queue.onSizeLessThan(1);
    }
  }

  /** One attempt of one event, recorded; never throws. */
  private async attempt(event: DueEvent): Promise<void> {
    const started = this.now();
    const channel: Recipient['channel'] = event.subscription?.recipient.channel ?? 'webhook';
    try {
      const outcome = await this.send(event, event.subscription?.recipient);
      const state = await this.recorder.record({ event, outcome, started, sender: this.sender });
      this.options.onAttempt?.(channel, state === 'delivered' ? 'sent' : state === 'failed' ? 'failed' : 'retrying');
      if (state === 'failed')
        this.options.logger.warn(
          `Notification ${event.id} (${event.event}, job ${event.jobId}, subscription ${event.subscriptionId}) failed: ${outcome.message}`,
        );
    } catch (error) {
      // not recorded (the store is unreachable): the lease ends and the event is due again
      this.options.logger.warn(`Notification ${event.id}: attempt not recorded: ${(error as Error).message}`);
    }
  }

  /** The attempt itself: what the recipient answered. */
  send(event: DueEvent, recipient: Recipient | undefined): Promise<AttemptOutcome> {
    const payload = this.withLink(event.payload);
    if (!recipient)
      return Promise.resolve({ outcome: 'final', statusCode: null, message: 'the subscription was deleted' });
    if (recipient.channel === 'email') {
      if (!this.options.email)
        return Promise.resolve({
          outcome: 'final',
          statusCode: null,
          message:
            'no SMTP relay is configured on the process that took it: set GEX_SMTP_URL on every server and worker',
        });
      return this.options.email.send(recipient.address, payload, this.abort.signal);
    }
    return this.sendWebhook(event, payload);
  }

  private async sendWebhook(event: DueEvent, payload: NotificationPayload): Promise<AttemptOutcome> {
    const sealed = event.subscription?.sealed;
    const secrets =
      typeof sealed === 'string'
        ? this.options.subscriptions.openWebhookSecrets(event.projectId, sealed)
        : await this.options.subscriptions.webhookSecrets(event.projectId, event.subscriptionId);
    if (!secrets) return { outcome: 'final', statusCode: null, message: 'the subscription was deleted' };
    return sendWebhook({
      url: secrets.url,
      signingSecret: secrets.signingSecret,
      body: JSON.stringify(payload),
      deliveryId: event.deliveryId,
      event: event.event,
      attempt: event.attempt,
      timeoutMs: this.options.webhookTimeoutMs,
      signal: this.abort.signal,
    });
  }

  /**
   * Sends a sample of the subscription's event to its recipient now (not through the outbox, not
   * recorded): what the recipient answered; undefined when the project has no such subscription.
   */
  async sendSample(projectId: number, subscriptionId: number): Promise<AttemptOutcome | undefined> {
    const subscription = await this.options.subscriptions.get(projectId, subscriptionId);
    if (!subscription) return undefined;
    const now = this.now().toISOString();
    const deliveryId = `test-${randomUUID()}`;
    const payload: NotificationPayload = {
      eventType: subscription.event,
      eventId: deliveryId,
      job: {
        id: '0',
        status: 'test',
        startTime: now,
        endTime: now,
        durationSeconds: 0,
        component: { id: 'gex.test', name: 'gex' },
        configuration: { id: '0', name: 'a test notification' },
        message: 'A test notification from gex (gex notifications test): no job ended.',
        tasks: [],
      },
      branch: { id: 'default' },
      project: { id: String(projectId), name: '' },
    };
    const event: DueEvent = {
      id: 0,
      projectId,
      subscriptionId,
      event: subscription.event,
      jobId: 0,
      deliveryId,
      payload,
      created: now,
      attempt: 1,
    };
    return this.send(event, subscription.recipient);
  }

  /** The console's origin for links, when it is known only once the server listens (no --public-url). */
  linkTo(publicUrl: string): void {
    this.publicUrl ??= publicUrl;
  }

  private withLink(payload: NotificationPayload): NotificationPayload {
    const base = this.publicUrl;
    if (!base || payload.job.id === '') return payload;
    return { ...payload, job: { ...payload.job, url: jobPageUrl(base, payload.job.id) } };
  }

  /** Resolves once the look in progress and every attempt started have ended. */
  async settled(): Promise<void> {
    while (this.looking || this.queue.size > 0 || this.queue.pending > 0) {
      await this.looking;
      await this.queue.onIdle();
    }
  }

  /** Stops taking events; attempts in flight get STOP_WAIT_MS, then are cut (and retried by whoever runs next). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.looking;
    const idle = this.queue.onIdle();
    const cut = setTimeout(() => this.abort.abort(), STOP_WAIT_MS);
    await idle;
    clearTimeout(cut);
    await this.options.email?.close();
  }
}
