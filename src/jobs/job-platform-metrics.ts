import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Database } from '../store/sql/database.js';
import type { Row } from './job-rows.js';
import type { EndedJob } from './job-repository.js';
import type { AttemptCount } from './notifications/notification-sender.js';
import type { Recipient } from './notifications/subscription-input.js';

/** distinct component label values one process reports; later components are counted as `other` */
export const COMPONENT_LABEL_LIMIT = 100;
/** the label of components past the limit */
export const OTHER_COMPONENT = 'other';
/** the label of a component id that is no plain id (empty, too long, odd characters) */
export const INVALID_COMPONENT = 'invalid';
/** a component id as a label: what Keboola's ids are made of, at most 64 characters */
const LABEL_SAFE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** a queue figure counts at most this many jobs (a scrape stays one short index read, however long the queue) */
export const QUEUE_COUNT_CAP = 100_000;
/** queue figures read within this time are reused (several scrapers, or serve's and a worker's Prometheus) */
const FIGURES_FRESH_MS = 1000;
/** a read of the queue figures that takes longer fails (the scrape answers without them) */
const FIGURES_TIMEOUT_MS = 5000;
/** Job run times in seconds: from a second to a day. */
export const JOB_DURATION_BUCKETS = [1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 28800, 86400];

/** What the store's database says of the queue now (the same for every process on PostgreSQL). */
export interface QueueFigures {
  /** standard jobs not started (created or waiting) */
  waiting: number;
  /** standard jobs running (processing or terminating) */
  processing: number;
  /** seconds since the oldest waiting job was created; 0 when none waits */
  oldestWaitingSeconds: number;
  /** notification events waiting for another attempt after a failed one */
  notificationsRetrying: number;
}

/** The queue figures, read from the database: short reads on the (status, id) and (status, next_attempt) indexes. */
export async function readQueueFigures(db: Database, now = new Date()): Promise<QueueFigures> {
  const count = async (statuses: readonly string[]) => {
    const row = await db.get<Row>(
      `SELECT COUNT(*) AS n FROM (SELECT 1 FROM queue_jobs WHERE status IN (${statuses.map(() => '?').join(', ')})
        AND type = 'standard' LIMIT ${QUEUE_COUNT_CAP}) capped`,
      [...statuses],
    );
    return Number(row?.n ?? 0);
  };
  // per status, the oldest by id on the index (ids grow as jobs are created)
  const oldest = async (status: string) => {
    const row = await db.get<Row>(
      `SELECT created FROM queue_jobs WHERE status = ? AND type = 'standard' ORDER BY id LIMIT 1`,
      [status],
    );
    return row ? Date.parse(String(row.created)) : undefined;
  };
  const [waiting, processing, created, queued, retrying] = await Promise.all([
    count(['created', 'waiting']),
    count(['processing', 'terminating']),
    oldest('created'),
    oldest('waiting'),
    db.get<Row>(
      `SELECT COUNT(*) AS n FROM (SELECT 1 FROM notification_events WHERE status = 'pending' AND attempts > 0
        LIMIT ${QUEUE_COUNT_CAP}) capped`,
    ),
  ]);
  const times = [created, queued].filter((t): t is number => t !== undefined && !Number.isNaN(t));
  const first = times.length ? Math.min(...times) : undefined;
  return {
    waiting,
    processing,
    oldestWaitingSeconds: first === undefined ? 0 : Math.max(0, (now.getTime() - first) / 1000),
    notificationsRetrying: Number(retrying?.n ?? 0),
  };
}

/** Where the metrics read what is not counted here. */
export interface MetricSources {
  /** the queue figures (readQueueFigures of the store) */
  queue(): Promise<QueueFigures>;
  /** this process's worker pool: jobs running now, and free slots (both 0 without a pool) */
  workers(): { busy: number; idle: number };
}

/**
 * The job metrics of one process (prom-client, in the registry given: a server's `/metrics` or a
 * worker's listener). Counters count this process's events — job ends it committed, notification
 * attempts it made, schedule ticks its ticker fired or saw missed — so the sum over processes is
 * the store's. Gauges of the queue are read from the database on collect (every process of a
 * PostgreSQL store reports the same queue). Every label has a bounded set of values: statuses,
 * channels, and at most COMPONENT_LABEL_LIMIT component ids (then `other`).
 */
export class JobPlatformMetrics {
  private readonly finished: Counter<'component' | 'status'>;
  private readonly duration: Histogram<'status'>;
  private readonly sent: Counter<'channel'>;
  private readonly failed: Counter<'channel'>;
  private readonly retried: Counter<'channel'>;
  private readonly fired: Counter;
  private readonly missed: Counter;
  private readonly readErrors: Counter;
  private readonly components = new Set<string>();
  private figures: { at: number; read: Promise<QueueFigures | undefined> } | undefined;

  constructor(
    readonly registry: Registry,
    private readonly sources: MetricSources,
    private readonly onReadError: (error: Error) => void = () => undefined,
  ) {
    const registers = [registry];
    this.finished = new Counter({
      name: 'gex_jobs_finished_total',
      help: 'Queue jobs whose end this process committed, by component and final status (a flow counts its job and its tasks, not its phases)',
      labelNames: ['component', 'status'] as const,
      registers,
    });
    this.duration = new Histogram({
      name: 'gex_job_duration_seconds',
      help: 'Run time of the queue jobs whose end this process committed (started to ended), by final status',
      labelNames: ['status'] as const,
      buckets: JOB_DURATION_BUCKETS,
      registers,
    });
    const read = () => this.queueFigures();
    const figure = (pick: (f: QueueFigures) => number) => {
      return async function (this: Gauge) {
        const figures = await read();
        // not read: NaN, not a 0 that would look like an empty queue
        this.set(figures ? pick(figures) : NaN);
      };
    };
    new Gauge({
      name: 'gex_jobs_waiting',
      help: `Queue jobs not started yet (created or waiting), read from the store's database (counted up to ${QUEUE_COUNT_CAP})`,
      registers,
      collect: figure((f) => f.waiting),
    });
    new Gauge({
      name: 'gex_jobs_processing',
      help: `Queue jobs running (processing or terminating), read from the store's database (counted up to ${QUEUE_COUNT_CAP})`,
      registers,
      collect: figure((f) => f.processing),
    });
    new Gauge({
      name: 'gex_jobs_oldest_waiting_age_seconds',
      help: "Seconds since the oldest queue job not started yet was created (0: none waits), read from the store's database",
      registers,
      collect: figure((f) => f.oldestWaitingSeconds),
    });
    const workers = sources.workers.bind(sources);
    new Gauge({
      name: 'gex_workers_busy',
      help: "This process's worker slots running a job now",
      registers,
      collect() {
        this.set(workers().busy);
      },
    });
    new Gauge({
      name: 'gex_workers_idle',
      help: "This process's worker slots free for a job now (0 with no worker pool)",
      registers,
      collect() {
        this.set(workers().idle);
      },
    });
    const channel = (name: string, help: string) =>
      new Counter({ name, help, labelNames: ['channel'] as const, registers });
    this.sent = channel('gex_notifications_sent_total', 'Notification attempts of this process delivered, by channel');
    this.failed = channel(
      'gex_notifications_failed_total',
      'Notifications this process gave up on (a final refusal, or retries ran out), by channel',
    );
    this.retried = channel(
      'gex_notifications_retry_attempts_total',
      'Notification attempts of this process that failed and will be tried again, by channel',
    );
    new Gauge({
      name: 'gex_notifications_retrying',
      help: `Notification events waiting for another attempt after a failed one, read from the store's database (counted up to ${QUEUE_COUNT_CAP})`,
      registers,
      collect: figure((f) => f.notificationsRetrying),
    });
    this.fired = new Counter({
      name: 'gex_schedules_fired_total',
      help: "Schedule ticks this process's ticker fired (each made one job)",
      registers,
    });
    this.missed = new Counter({
      name: 'gex_schedules_missed_total',
      help: "Schedule ticks this process's ticker found missed (no worker ran when they fell; not made up)",
      registers,
    });
    this.readErrors = new Counter({
      name: 'gex_queue_metrics_read_errors_total',
      help: "Scrapes that could not read the queue figures from the store's database (they were NaN)",
      registers,
      // counted in the scrape that failed: collected after the read
      collect: async () => void (await read()),
    });
    // every status and channel from the start: a rate() has a zero to start from
    for (const status of ['success', 'error', 'warning', 'terminated', 'cancelled']) this.duration.zero({ status });
    for (const name of ['webhook', 'email'] as const)
      for (const counter of [this.sent, this.failed, this.retried]) counter.inc({ channel: name }, 0);
  }

  /** The queue figures of this scrape: one read shared by the gauges (and by scrapes within a second). */
  private queueFigures(): Promise<QueueFigures | undefined> {
    const now = Date.now();
    if (this.figures && now - this.figures.at < FIGURES_FRESH_MS) return this.figures.read;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the store's database did not answer within ${FIGURES_TIMEOUT_MS / 1000} s`)),
        FIGURES_TIMEOUT_MS,
      );
      timer.unref();
    });
    const read = Promise.race([this.sources.queue(), timeout])
      .catch((error: unknown) => {
        this.readErrors.inc();
        this.onReadError(error as Error);
        return undefined;
      })
      .finally(() => clearTimeout(timer));
    this.figures = { at: now, read };
    return read;
  }

  /** A component id as a label value: plain ids as they are, the first COMPONENT_LABEL_LIMIT of them. */
  componentLabel(componentId: string): string {
    if (!LABEL_SAFE.test(componentId) || componentId === OTHER_COMPONENT) return INVALID_COMPONENT;
    if (this.components.has(componentId)) return componentId;
    if (this.components.size >= COMPONENT_LABEL_LIMIT) return OTHER_COMPONENT;
    this.components.add(componentId);
    return componentId;
  }

  /** Jobs whose end this process committed (JobRepository's onJobsEnded). */
  jobsEnded(ends: readonly EndedJob[]): void {
    for (const end of ends) {
      this.finished.inc({ component: this.componentLabel(end.componentId), status: end.status });
      if (end.durationSeconds !== null) this.duration.observe({ status: end.status }, end.durationSeconds);
    }
  }

  /** A notification attempt of this process's sender (NotificationSender's onAttempt). */
  notificationAttempt(channel: Recipient['channel'], counted: AttemptCount): void {
    const name = channel === 'email' ? 'email' : 'webhook';
    if (counted === 'sent') this.sent.inc({ channel: name });
    else if (counted === 'failed') this.failed.inc({ channel: name });
    else this.retried.inc({ channel: name });
  }

  /** A schedule tick this process's ticker fired. */
  scheduleFired(): void {
    this.fired.inc();
  }

  /** Schedule ticks this process's ticker found missed. */
  schedulesMissed(ticks: number): void {
    if (ticks > 0) this.missed.inc(ticks);
  }
}
