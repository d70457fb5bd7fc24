import { randomUUID } from 'node:crypto';
import type { Database, SqlExecutor, SqlParam } from '../../store/sql/database.js';
import type { QueueJob } from '../job-record.js';
import { SELECT, toJob, type Row } from '../job-rows.js';
import { endEvent, factsOf, filtersMatch } from './event-match.js';
import type { AttemptOutcome, NotificationPayload } from './notification-payload.js';
import type { Recipient, SubscriptionEvent, SubscriptionFilter } from './subscription-input.js';

/** how long a sender holds an event it took: past it, another sender takes it (a sender that died) */
export const DELIVERY_LEASE_MS = 60_000;
/** how long an event is retried after it was written; then it fails for good */
export const RETRY_FOR_MS = 24 * 3600_000;
const SEQUENCE = 'notification-event';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** An event's subscription as it was when the event was taken (undefined when it was deleted). */
export interface DueSubscription {
  recipient: Recipient;
  /** a webhook's whole URL and signing secret, sealed (SubscriptionRepository.openWebhookSecrets) */
  sealed: string | null;
}

/** An event taken for an attempt: what to send where. */
export interface DueEvent {
  id: number;
  projectId: number;
  subscriptionId: number;
  event: SubscriptionEvent;
  jobId: number;
  deliveryId: string;
  payload: NotificationPayload;
  created: string;
  /** this attempt's number (1 for the first) */
  attempt: number;
  subscription?: DueSubscription;
}

/** One attempt to record: the event, what its recipient answered, when it started and who made it. */
export interface AttemptRecord {
  event: DueEvent;
  outcome: AttemptOutcome;
  started: Date;
  sender: string;
}

/** One event and its attempts, as the API and `gex notifications deliveries` show them. */
export interface DeliveryRecord {
  id: number;
  subscriptionId: number;
  event: SubscriptionEvent;
  jobId: number;
  deliveryId: string;
  status: DeliveryStatus;
  created: string;
  ended: string | null;
  nextAttempt: string | null;
  attempts: Array<{
    attempt: number;
    started: string;
    durationMs: number;
    outcome: AttemptOutcome['outcome'];
    statusCode: number | null;
    message: string;
  }>;
}

/**
 * The delay before attempt `attempt + 1` after a failed attempt `attempt`: 10 s doubling to an
 * hour, ±20 % so that senders that failed together do not retry together.
 */
export function retryDelayMs(attempt: number, random = Math.random): number {
  const base = Math.min(3600_000, 10_000 * 2 ** Math.max(0, Math.min(attempt - 1, 20)));
  return Math.round(base * (0.8 + 0.4 * random()));
}

interface SubscriptionRow {
  id: number;
  event: SubscriptionEvent;
  filters: SubscriptionFilter[];
}

async function subscriptionsOf(tx: SqlExecutor, projectId: number, event: SubscriptionEvent) {
  const rows = await tx.all<Row>(
    'SELECT id, event, filters FROM notification_subscriptions WHERE project_id = ? AND event = ? ORDER BY id',
    [projectId, event],
  );
  return rows.map((r): SubscriptionRow => ({
    id: Number(r.id),
    event: String(r.event) as SubscriptionEvent,
    filters: JSON.parse(String(r.filters)) as SubscriptionFilter[],
  }));
}

async function namesOf(tx: SqlExecutor, job: QueueJob): Promise<{ component: string; configuration: string }> {
  const component = await tx.get<Row>('SELECT name FROM components WHERE id = ?', [job.componentId]);
  const configuration = await tx.get<Row>(
    'SELECT name FROM configurations WHERE project_id = ? AND component_id = ? AND id = ?',
    [job.projectId, job.componentId, job.configId],
  );
  return {
    component: component ? String(component.name) : job.componentId,
    configuration: configuration ? String(configuration.name) : job.configId,
  };
}

/** The payload of a job's event (its url is added by the process that sends it). */
export async function payloadOf(
  tx: SqlExecutor,
  job: QueueJob,
  event: SubscriptionEvent,
  eventId: string,
  longRun?: { averageDuration: number; currentDuration: number; overtime: number },
): Promise<NotificationPayload> {
  const names = await namesOf(tx, job);
  const phase = job.type === 'phaseContainer' ? factsOf(job)['phase.id'] : undefined;
  const message = job.result?.error?.message ?? job.result?.message ?? '';
  return {
    eventType: event,
    eventId,
    job: {
      id: String(job.id),
      status: job.status,
      startTime: job.started,
      endTime: job.ended,
      durationSeconds: job.durationSeconds,
      component: { id: job.componentId, name: names.component },
      configuration: { id: job.configId, name: names.configuration },
      message: message.length > 4000 ? `${message.slice(0, 4000)}…` : message,
      tasks: [],
    },
    branch: { id: job.branchId },
    project: { id: String(job.projectId), name: job.projectName },
    ...(phase === undefined ? {} : { phase: { id: phase, jobId: String(job.id) } }),
    ...(longRun
      ? {
          averageDuration: longRun.averageDuration,
          currentDuration: longRun.currentDuration,
          durationOvertimePercentage: longRun.overtime,
        }
      : {}),
  };
}

/**
 * Writes the events `event` of `job` for every subscription of its project whose filters match, in
 * the caller's transaction; at most one per subscription, job and event (a second write of the
 * same is dropped). How many were written.
 */
export async function enqueueEvents(
  tx: SqlExecutor,
  job: QueueJob,
  event: SubscriptionEvent,
  now: Date,
  longRun?: { averageDuration: number; currentDuration: number; overtime: number },
): Promise<number> {
  const subscriptions = await subscriptionsOf(tx, job.projectId, event);
  const facts = factsOf(job, longRun?.overtime);
  const matching = subscriptions.filter((s) => filtersMatch(s.filters, facts));
  if (matching.length === 0) return 0;
  const seq = await tx.get<Row>(
    'INSERT INTO sequences (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = sequences.value + ? RETURNING value',
    [SEQUENCE, matching.length, matching.length],
  );
  const first = Number(seq!.value) - matching.length + 1;
  const at = now.toISOString();
  // one payload for every subscription, each with its own event id; one INSERT for them all
  const shared = await payloadOf(tx, job, event, '', longRun);
  const params = matching.flatMap((subscription, i) => {
    const deliveryId = randomUUID();
    const payload: NotificationPayload = { ...shared, eventId: deliveryId };
    return [first + i, job.projectId, subscription.id, event, job.id, deliveryId, JSON.stringify(payload), at, at];
  });
  const inserted = await tx.run(
    `INSERT INTO notification_events (id, project_id, subscription_id, event, job_id, delivery_id, payload, created, status, attempts, next_attempt)
      VALUES ${matching.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?)").join(', ')}
      ON CONFLICT (subscription_id, job_id, event) DO NOTHING`,
    params,
  );
  return inserted.changes;
}

/** The events job `id`'s end causes (it ended in this transaction), written in it; how many. */
export async function enqueueJobEnd(tx: SqlExecutor, id: number, now: Date): Promise<number> {
  const row = await tx.get<Row>(`${SELECT} WHERE j.id = ?`, [id]);
  if (!row) return 0;
  const job = toJob(row);
  const event = endEvent(job);
  return event ? enqueueEvents(tx, job, event, now) : 0;
}

function toDue(row: Row): DueEvent {
  const subscription: DueSubscription | undefined =
    row.s_recipient === null || row.s_recipient === undefined
      ? undefined
      : {
          recipient: JSON.parse(String(row.s_recipient)) as Recipient,
          sealed: typeof row.s_sealed === 'string' ? row.s_sealed : null,
        };
  return {
    id: Number(row.id),
    projectId: Number(row.project_id),
    subscriptionId: Number(row.subscription_id),
    event: String(row.event) as SubscriptionEvent,
    jobId: Number(row.job_id),
    deliveryId: String(row.delivery_id),
    payload: JSON.parse(String(row.payload)) as NotificationPayload,
    created: String(row.created),
    attempt: Number(row.attempts),
    subscription,
  };
}

/**
 * The outbox of notification events in the store's database: taking due events for an attempt
 * (a lease: a sender that dies leaves them due again after DELIVERY_LEASE_MS), recording each
 * attempt with the event's next state in one transaction, and reading the records.
 */
export class NotificationOutbox {
  constructor(private readonly db: Database) {}

  /**
   * Takes up to `limit` due events for `sender`: each one's attempt count goes up and it is not
   * due again until the lease ends (PostgreSQL: rows another sender is taking are skipped).
   */
  take(limit: number, now = new Date()): Promise<DueEvent[]> {
    const skipLocked = this.db.dialect.name === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
    return this.db.transaction(async (tx) => {
      const due = await tx.all<Row>(
        `SELECT id FROM notification_events WHERE status = 'pending' AND next_attempt <= ? ORDER BY next_attempt, id LIMIT ?${skipLocked}`,
        [now.toISOString(), limit],
      );
      if (due.length === 0) return [];
      const ids = due.map((r) => Number(r.id));
      const marks = ids.map(() => '?').join(', ');
      await tx.run(`UPDATE notification_events SET attempts = attempts + 1, next_attempt = ? WHERE id IN (${marks})`, [
        new Date(now.getTime() + DELIVERY_LEASE_MS).toISOString(),
        ...ids,
      ]);
      const rows = await tx.all<Row>(
        `SELECT e.*, s.recipient AS s_recipient, s.sealed AS s_sealed FROM notification_events e
          LEFT JOIN notification_subscriptions s ON s.id = e.subscription_id AND s.project_id = e.project_id
          WHERE e.id IN (${marks}) ORDER BY e.id`,
        ids,
      );
      return rows.map(toDue);
    });
  }

  /**
   * Records attempt `event.attempt` and the event's next state: delivered, failed (a final answer,
   * or retried for RETRY_FOR_MS), or due again after the backoff. A sender whose lease ran out and
   * whose event another sender took since records its attempt but leaves the state to the other.
   * The state the event is in after it.
   */
  async record(
    event: DueEvent,
    outcome: AttemptOutcome,
    attempt: { started: Date; sender: string },
    now = new Date(),
    random = Math.random,
  ): Promise<DeliveryStatus | 'retrying'> {
    const [state] = await this.recordAll([{ event, outcome, ...attempt }], now, random);
    return state;
  }

  /** Records attempts as `record` does, all in one transaction; each event's state after it, in order. */
  async recordAll(
    attempts: readonly AttemptRecord[],
    now = new Date(),
    random = Math.random,
  ): Promise<Array<DeliveryStatus | 'retrying'>> {
    if (attempts.length === 0) return [];
    const next = attempts.map(({ event, outcome }) => {
      const retryAt = new Date(now.getTime() + retryDelayMs(event.attempt, random));
      const givenUp = retryAt.getTime() - Date.parse(event.created) > RETRY_FOR_MS;
      const status: DeliveryStatus =
        outcome.outcome === 'delivered' ? 'delivered' : outcome.outcome === 'final' || givenUp ? 'failed' : 'pending';
      const message = (
        status === 'failed' && outcome.outcome === 'retry'
          ? `${outcome.message} (retried for 24 hours: given up)`
          : outcome.message
      ).slice(0, 1000);
      return { status, retryAt, message };
    });
    await this.db.transaction(async (tx) => {
      await tx.run(
        `INSERT INTO notification_attempts (event_id, attempt, project_id, started, duration_ms, outcome, status_code, message, sender)
          VALUES ${attempts.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')} ON CONFLICT (event_id, attempt) DO NOTHING`,
        attempts.flatMap(({ event, outcome, started, sender }, i) => [
          event.id,
          event.attempt,
          event.projectId,
          started.toISOString(),
          Math.max(0, now.getTime() - started.getTime()),
          next[i].status === 'failed' ? 'final' : outcome.outcome,
          outcome.statusCode,
          next[i].message,
          sender.slice(0, 200),
        ]),
      );
      for (const [i, { event, outcome }] of attempts.entries()) {
        const { status, retryAt, message } = next[i];
        await tx.run(
          `UPDATE notification_events SET status = ?, next_attempt = ?, last_status_code = ?, last_message = ?, ended = ?
            WHERE id = ? AND attempts = ? AND status = 'pending'`,
          [
            status,
            status === 'pending' ? retryAt.toISOString() : now.toISOString(),
            outcome.statusCode,
            message,
            status === 'pending' ? null : now.toISOString(),
            event.id,
            event.attempt,
          ],
        );
      }
    });
    return next.map(({ status }) => (status === 'pending' ? 'retrying' : status));
  }

  /** The project's events, newest first (of one subscription when given), each with its attempts. */
  async deliveries(
    projectId: number,
    options: { subscriptionId?: number; limit?: number; before?: number } = {},
  ): Promise<DeliveryRecord[]> {
    const where = ['project_id = ?'];
    const params: SqlParam[] = [projectId];
    if (options.subscriptionId !== undefined) {
      where.push('subscription_id = ?');
      params.push(options.subscriptionId);
    }
    if (options.before !== undefined) {
      where.push('id < ?');
      params.push(options.before);
    }
    const limit = Math.max(1, Math.min(options.limit ?? 100, 1000));
    const events = await this.db.all<Row>(
      `SELECT * FROM notification_events WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`,
      [...params, limit],
    );
    if (events.length === 0) return [];
    const ids = events.map((r) => Number(r.id));
    const attempts = await this.db.all<Row>(
      `SELECT * FROM notification_attempts WHERE event_id IN (${ids.map(() => '?').join(', ')}) ORDER BY event_id, attempt`,
      ids,
    );
    const byEvent = new Map<number, DeliveryRecord['attempts']>();
    for (const a of attempts) {
      const list = byEvent.get(Number(a.event_id)) ?? [];
      list.push({
        attempt: Number(a.attempt),
        started: String(a.started),
        durationMs: Number(a.duration_ms),
        outcome: String(a.outcome) as AttemptOutcome['outcome'],
        statusCode: a.status_code === null ? null : Number(a.status_code),
        message: String(a.message),
      });
      byEvent.set(Number(a.event_id), list);
    }
    return events.map((r) => ({
      id: Number(r.id),
      subscriptionId: Number(r.subscription_id),
      event: String(r.event) as SubscriptionEvent,
      jobId: Number(r.job_id),
      deliveryId: String(r.delivery_id),
      status: String(r.status) as DeliveryStatus,
      created: String(r.created),
      ended: r.ended === null ? null : String(r.ended),
      nextAttempt: String(r.status) === 'pending' ? String(r.next_attempt) : null,
      attempts: byEvent.get(Number(r.id)) ?? [],
    }));
  }

  /** Events waiting for an attempt after a failed one (a backlog gauge). */
  async retrying(): Promise<number> {
    const row = await this.db.get<Row>(
      "SELECT COUNT(*) AS n FROM notification_events WHERE status = 'pending' AND attempts > 0",
    );
    return Number(row?.n ?? 0);
  }
}
