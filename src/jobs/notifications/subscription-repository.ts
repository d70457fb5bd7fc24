import { randomBytes } from 'node:crypto';
import type { ProjectSecrets } from '../../store/encryption.js';
import type { Database } from '../../store/sql/database.js';
import {
  invalidSubscription,
  maskedUrl,
  type Recipient,
  type SubscriptionEvent,
  type SubscriptionFilter,
  type SubscriptionInput,
} from './subscription-input.js';

/** subscriptions one project may hold */
export const MAX_SUBSCRIPTIONS = 1000;

/** A project's subscription as answers show it: a webhook URL's query masked, no secret. */
export interface SubscriptionRecord {
  id: number;
  projectId: number;
  event: SubscriptionEvent;
  filters: SubscriptionFilter[];
  recipient: Recipient;
  created: string;
}

/** What a webhook delivery needs and nothing answers with: the whole URL and the signing secret. */
export interface WebhookSecrets {
  url: string;
  signingSecret: string;
}

type Row = Record<string, unknown>;

const SELECT = 'SELECT id, project_id, event, filters, recipient, created FROM notification_subscriptions';
const SEQUENCE = 'notification-subscription';

function toRecord(row: Row): SubscriptionRecord {
  return {
    id: Number(row.id),
    projectId: Number(row.project_id),
    event: String(row.event) as SubscriptionEvent,
    filters: JSON.parse(String(row.filters)) as SubscriptionFilter[],
    recipient: JSON.parse(String(row.recipient)) as Recipient,
    created: String(row.created),
  };
}

/**
 * The Notification API's subscriptions in the store's database. A webhook's whole URL and its
 * signing secret (32 random bytes, shown once, at creation) are sealed under the master key; what
 * is read back for answers holds the URL with its query values hidden.
 */
export class SubscriptionRepository {
  constructor(
    private readonly db: Database,
    private readonly secrets: ProjectSecrets,
    private readonly bound = MAX_SUBSCRIPTIONS,
  ) {}

  /** Stores a checked subscription; a webhook's signing secret is returned here only. */
  async create(
    projectId: number,
    input: SubscriptionInput,
    now = new Date(),
  ): Promise<{ subscription: SubscriptionRecord; signingSecret: string | null }> {
    const signingSecret = input.recipient.channel === 'webhook' ? randomBytes(32).toString('hex') : null;
    const shown: Recipient =
      input.recipient.channel === 'webhook'
        ? { channel: 'webhook', url: maskedUrl(input.recipient.url) }
        : input.recipient;
    const sealed =
      input.recipient.channel === 'webhook'
        ? this.secrets.seal(projectId, JSON.stringify({ url: input.recipient.url, signingSecret }))
        : null;
    const id = await this.db.transaction(async (tx) => {
      // the sequence's row is locked until commit: creations take turns, so the count below holds
      const seq = await tx.get<Row>(
        'INSERT INTO sequences (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = sequences.value + 1 RETURNING value',
        [SEQUENCE],
      );
      const count = await tx.get<Row>('SELECT COUNT(*) AS n FROM notification_subscriptions WHERE project_id = ?', [
        projectId,
      ]);
      if (Number(count?.n ?? 0) >= this.bound)
        throw invalidSubscription(
          'event',
          `a project holds at most ${this.bound} subscriptions: delete one (DELETE /project-subscriptions/{id}) first`,
        );
      const next = Number(seq!.value);
      await tx.run(
        `INSERT INTO notification_subscriptions (id, project_id, event, filters, recipient, sealed, created)
          VALUES (?, ?, ?, ?, ?, ?, ?)`,
        [next, projectId, input.event, JSON.stringify(input.filters), JSON.stringify(shown), sealed, now.toISOString()],
      );
      return next;
    });
    return { subscription: (await this.get(projectId, id))!, signingSecret };
  }

  /** The project's subscriptions, oldest first. */
  async list(projectId: number): Promise<SubscriptionRecord[]> {
    return (await this.db.all<Row>(`${SELECT} WHERE project_id = ? ORDER BY id`, [projectId])).map(toRecord);
  }

  async get(projectId: number, id: number): Promise<SubscriptionRecord | undefined> {
    const row = await this.db.get<Row>(`${SELECT} WHERE project_id = ? AND id = ?`, [projectId, id]);
    return row && toRecord(row);
  }

  async count(projectId: number): Promise<number> {
    const row = await this.db.get<Row>('SELECT COUNT(*) AS n FROM notification_subscriptions WHERE project_id = ?', [
      projectId,
    ]);
    return Number(row?.n ?? 0);
  }

  /** Deletes a subscription of the project; false when it has none of that id. */
  async remove(projectId: number, id: number): Promise<boolean> {
    const deleted = await this.db.run('DELETE FROM notification_subscriptions WHERE project_id = ? AND id = ?', [
      projectId,
      id,
    ]);
    return deleted.changes > 0;
  }

  /** A webhook subscription's whole URL and signing secret (for delivery, never for an answer). */
  async webhookSecrets(projectId: number, id: number): Promise<WebhookSecrets | undefined> {
    const row = await this.db.get<Row>(
      'SELECT sealed FROM notification_subscriptions WHERE project_id = ? AND id = ?',
      [projectId, id],
    );
    if (typeof row?.sealed !== 'string') return undefined;
    return this.openWebhookSecrets(projectId, row.sealed);
  }

  /** A webhook subscription's URL and signing secret from its sealed column (read with its event). */
  openWebhookSecrets(projectId: number, sealed: string): WebhookSecrets {
    return JSON.parse(this.secrets.open(projectId, sealed)) as WebhookSecrets;
  }
}
