import { fork } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { SUBSCRIPTION_SECRETS } from '../src/jobs/job-queue.js';
import { JobRepository } from '../src/jobs/job-repository.js';
import { NotificationOutbox } from '../src/jobs/notifications/notification-outbox.js';
import { DEFAULT_CONCURRENCY, NotificationSender } from '../src/jobs/notifications/notification-sender.js';
import { subscriptionInput } from '../src/jobs/notifications/subscription-input.js';
import { SubscriptionRepository } from '../src/jobs/notifications/subscription-repository.js';
import { fromPlain } from '../src/json/index.js';
import type { EmbeddedBackend } from '../src/store/embedded/embedded-backend.js';
import type { TokenInfo } from '../src/store/types.js';
import { captureLogger } from '../test/support/extraction.js';
import { runRequest } from '../test/support/flow-setup.js';
import { openEmbeddedStore } from '../test/support/open-store.js';
import { TEST_KEY, type BackendFactory } from '../test/support/store.js';
import type { Receipt } from './webhook-receiver-process.js';

/** the sender's poll without being told (its default: the worst case of a job end it is not told of) */
const POLL_MS = 500;
const OK = { message: 'done', configVersion: '1', output: { tables: [] } };

export interface NotificationsShape {
  /** job ends timed one by one, for each of the two cases of the delivery latency */
  latencyJobs: number;
  /** job ends of the throughput run with notifications on (and as many with none) */
  jobEnds: number;
  /** webhook subscriptions of every job end of the run with notifications on */
  subscriptions: number;
  /** the receiver answers each POST of the throughput run after this long */
  answerDelayMs: number;
  /** batches of each side, alternating on / off */
  batches: number;
  /** job ends in flight at once (loops of create → claim → finish, each on configurations of its own) */
  enders: number;
  /** the sender's concurrency in the throughput run (its default: DEFAULT_CONCURRENCY) */
  concurrency: number;
  /** events of a backlog drained once at the default concurrency */
  defaultBacklog: number;
}

export interface LatencyFigure {
  /** told: the job end is committed by the sender's own JobRepository; polled: by another store connection */
  case: 'told' | 'polled';
  /** finish() returned (the end committed) → the receiver got the POST, ms */
  samplesMs: number[];
  medianMs: number;
  maxMs: number;
  /** the job's endTime → the receiver got the POST, median ms */
  fromEndTimeMedianMs: number;
}

export interface ThroughputFigure {
  jobEnds: number;
  subscriptions: number;
  /** the time of each batch, in the order run */
  batches: Array<{ side: 'on' | 'off'; jobs: number; ms: number }>;
  onMs: number;
  offMs: number;
  onPerSecond: number;
  offPerSecond: number;
  /** on / off, wall times */
  ratio: number;
  /** job ends in flight at once */
  enders: number;
  /**
   * job ends writing their events with no sender running (the events' own cost, without the
   * sender's work), right before as many job ends without subscriptions: ms, ms, ratio
   */
  writeOnly: { jobs: number; ms: number; besideMs: number; ratio: number };
}

export interface DrainFigure {
  events: number;
  concurrency: number;
  answerDelayMs: number;
  /** per batch of job ends: its first job end → its last event received; events not yet received at its last job end, and how long after it the last came */
  batches: Array<{ events: number; ms: number; backlogAtLastEnd: number; afterLastEndMs: number }>;
  /** the batches' drains added up */
  drainMs: number;
  deliveriesPerSecond: number;
  /** the receiver's counts of delivery ids */
  distinctReceived: number;
  duplicates: number;
  missing: number;
  /** the outbox: events delivered, and attempts recorded */
  deliveredInOutbox: number;
  attemptsInOutbox: number;
}

export interface DefaultConcurrencyFigure {
  concurrency: number;
  /** a backlog written with no sender running, then drained by one started afresh */
  events: number;
  ms: number;
  perSecond: number;
  /** the same rate over the run's events */
  extrapolatedMs: number;
}

export interface NotificationsFigure {
  store: BackendFactory['name'];
  latency: LatencyFigure[];
  throughput: ThroughputFigure;
  drain: DrainFigure;
  defaultConcurrency: DefaultConcurrencyFigure;
  /** warnings the senders logged (failed or unrecorded attempts) */
  warnings: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : Math.round(((sorted[mid - 1] + sorted[mid]) / 2) * 10) / 10;
};

/** A store's job ends and a sender delivering its outbox, wired as JobPlatform wires them. */
interface Platform {
  backend: EmbeddedBackend;
  token: TokenInfo;
  jobs: JobRepository;
  subscriptions: SubscriptionRepository;
  outbox: NotificationOutbox;
  sender: NotificationSender;
  dispose(): Promise<void>;
}

type Opened = Awaited<ReturnType<BackendFactory['open']>>;

function platformOf(
  opened: Opened,
  token: TokenInfo,
  logger: ReturnType<typeof captureLogger>['logger'],
  concurrency?: number,
): Platform {
  const { backend } = opened;
  const holder: { sender?: NotificationSender } = {};
  const subscriptions = new SubscriptionRepository(backend.db, backend.projectSecrets(SUBSCRIPTION_SECRETS));
  const outbox = new NotificationOutbox(backend.db);
  const jobs = new JobRepository(backend.db, { onNotificationEvents: () => holder.sender?.wake() });
  const sender = (holder.sender = new NotificationSender({
    outbox,
    subscriptions,
    logger,
    pollMs: POLL_MS,
    concurrency,
  }));
  return { backend, token, jobs, subscriptions, outbox, sender, dispose: () => opened.dispose() };
}

async function subscribe(p: Platform, url: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++)
    await p.subscriptions.create(
      p.token.projectId,
      subscriptionInput(
        fromPlain({ event: 'job-succeeded', recipient: { channel: 'webhook', url: `${url}/hook/${i}` } }),
      ),
    );
}

/** One job's life at the store: created, claimed, finished `success`; when finish() returned. */
async function endJob(
  jobs: JobRepository,
  token: TokenInfo,
  config: string,
): Promise<{ id: number; endTime: number; committed: number }> {
  const job = await jobs.create(runRequest(token, config));
  await jobs.claim(job.id, 'bench-worker');
  const endTime = new Date();
  if (!(await jobs.finish(job.id, () => ({ status: 'success', result: OK }), endTime)))
    throw new Error(`job ${job.id} was not running`);
  return { id: job.id, endTime: endTime.getTime(), committed: Date.now() };
}

/** `count` job ends, `enders` at a time (each loop on ten configurations of its own): the first and last commit. */
async function endJobs(p: Platform, count: number, enders: number): Promise<{ first: number; last: number }> {
  let next = 0;
  let first = Infinity;
  let last = 0;
  await Promise.all(
    Array.from({ length: enders }, async (_, loop) => {
      for (let k = 0; next < count; k++) {
        next++;
        const ended = await endJob(p.jobs, p.token, `c${loop}-${k % 10}`);
        first = Math.min(first, ended.committed);
        last = Math.max(last, ended.committed);
      }
    }),
  );
  return { first, last };
}

/** Delivery latency of one job end at a time, `count` times, a varying pause between (the poll's phase). */
async function latencyOf(
  which: LatencyFigure['case'],
  jobs: JobRepository,
  token: TokenInfo,
  receiver: RemoteReceiver,
  count: number,
): Promise<LatencyFigure> {
  const samplesMs: number[] = [];
  const fromEnd: number[] = [];
  for (let i = 0; i < count; i++) {
    await sleep(40 + ((i * 211) % 460));
    const before = receiver.received.length;
    const ended = await endJob(jobs, token, `latency-${which}`);
    await receiver.until(before + 1, 10_000, `${which}: job ${ended.id}'s event`);
    const hook = receiver.received[before];
    if (hook.jobId !== String(ended.id)) throw new Error(`${which}: another job's event received`);
    samplesMs.push(hook.at - ended.committed);
    fromEnd.push(hook.at - ended.endTime);
  }
  return {
    case: which,
    samplesMs,
    medianMs: median(samplesMs),
    maxMs: Math.max(...samplesMs),
    fromEndTimeMedianMs: median(fromEnd),
  };
}

async function outboxCounts(p: Platform): Promise<{ delivered: number; attempts: number }> {
  const delivered = await p.backend.db.get<Record<string, unknown>>(
    "SELECT COUNT(*) AS n FROM notification_events WHERE status = 'delivered'",
  );
  const attempts = await p.backend.db.get<Record<string, unknown>>('SELECT COUNT(*) AS n FROM notification_attempts');
  return { delivered: Number(delivered?.n), attempts: Number(attempts?.n) };
}

/** The receiver (bench/webhook-receiver-process.ts) as the parent sees it: what it received, by when. */
export interface RemoteReceiver {
  url: string;
  received: Receipt[];
  answerAfter(ms: number): void;
  /** resolves once `count` POSTs were received; rejects after `timeoutMs` */
  until(count: number, timeoutMs: number, what: string): Promise<void>;
  close(): Promise<void>;
}

export async function startRemoteReceiver(): Promise<RemoteReceiver> {
  const child = fork(fileURLToPath(new URL('./webhook-receiver-process.js', import.meta.url)), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const received: Receipt[] = [];
  const waiters = new Set<{ count: number; resolve: () => void }>();
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the webhook receiver exited (${code})`)));
    child.on('message', (message: { url?: string; receipts?: Receipt[] }) => {
      if (message.url) resolve(message.url);
      for (const r of message.receipts ?? []) received.push(r);
      for (const w of waiters)
        if (received.length >= w.count) {
          waiters.delete(w);
          w.resolve();
        }
    });
  });
  return {
    url,
    received,
    answerAfter: (ms) => child.send({ delayMs: ms }),
    async until(count, timeoutMs, what) {
      if (received.length >= count) return;
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve, reject) => {
        waiters.add({ count, resolve });
        timer = setTimeout(
          () => reject(new Error(`${what}: ${received.length} of ${count} events received in ${timeoutMs} ms`)),
          timeoutMs,
        );
      }).finally(() => clearTimeout(timer));
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.disconnect();
      }),
  };
}

/**
 * issue 37's figures on one store: the delivery latency (told, and polled), the job-end throughput
 * with `subscriptions` webhooks on every end against none, alternating, and the drain of its events.
 */
export async function notificationsFigure(
  factory: BackendFactory,
  shape: NotificationsShape,
): Promise<NotificationsFigure> {
  const capture = captureLogger('info');
  const disposers: Array<() => Promise<void>> = [];
  const receiver = await startRemoteReceiver();
  disposers.push(() => receiver.close());
  const senders: NotificationSender[] = [];
  try {
    // 1. delivery latency: one subscription, the receiver answering at once
    const latencyStore = await factory.open();
    disposers.push(() => latencyStore.dispose());
    const latencyToken = (await latencyStore.backend.createToken({ description: 'bench' })).info;
    const latency = platformOf(latencyStore, latencyToken, capture.logger);
    senders.push(latency.sender);
    await subscribe(latency, receiver.url, 1);
    latency.sender.start();
    // another process's job ends: its own connection to the store, nothing tells this sender
    const other = await openEmbeddedStore(latencyStore.location, TEST_KEY);
    disposers.push(() => other.close());
    const otherJobs = new JobRepository(other.db);
    await latencyOf('told', latency.jobs, latencyToken, receiver, 2); // warm-up: connections, statements
    const told = await latencyOf('told', latency.jobs, latencyToken, receiver, shape.latencyJobs);
    const polled = await latencyOf('polled', otherJobs, latencyToken, receiver, shape.latencyJobs);
    await latency.sender.stop();
    receiver.received.length = 0;

    // 2. throughput: a store with subscriptions and one without, each with its running sender
    receiver.answerAfter(shape.answerDelayMs);
    const sides = {} as Record<'on' | 'off', Platform>;
    for (const side of ['on', 'off'] as const) {
      const opened = await factory.open();
      disposers.push(() => opened.dispose());
      const token = (await opened.backend.createToken({ description: 'bench' })).info;
      const p = (sides[side] = platformOf(opened, token, capture.logger, shape.concurrency));
      senders.push(p.sender);
      await endJobs(p, 100, shape.enders); // warm-up, before any subscription
      p.sender.start();
    }
    await subscribe(sides.on, receiver.url, shape.subscriptions);
    const perBatch = Math.ceil(shape.jobEnds / shape.batches);
    const batches: ThroughputFigure['batches'] = [];
    const drains: DrainFigure['batches'] = [];
    let done = { on: 0, off: 0 };
    for (let b = 0; b < shape.batches; b++) {
      for (const side of b % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const p = sides[side];
        const jobs = Math.min(perBatch, shape.jobEnds - done[side]);
        const started = performance.now();
        const ends = await endJobs(p, jobs, shape.enders);
        batches.push({ side, jobs, ms: Math.round(performance.now() - started) });
        done = { ...done, [side]: done[side] + jobs };
        if (side === 'off') continue;
        // the batch's events drained before anything else runs (the side without stays undisturbed)
        const expected = done.on * shape.subscriptions;
        await receiver.until(expected, 600_000, 'drain');
        const mine = receiver.received.slice(expected - jobs * shape.subscriptions);
        const lastAt = Math.max(...mine.map((r) => r.at));
        drains.push({
          events: jobs * shape.subscriptions,
          ms: lastAt - ends.first,
          backlogAtLastEnd: mine.filter((r) => r.at > ends.last).length,
          afterLastEndMs: Math.max(0, lastAt - ends.last),
        });
      }
    }
    const sum = (side: 'on' | 'off') => batches.filter((x) => x.side === side).reduce((a, x) => a + x.ms, 0);
    const onMs = sum('on');
    const offMs = sum('off');

    // every event received exactly once, and recorded so
    const events = shape.jobEnds * shape.subscriptions;
    await sides.on.sender.settled();
    await sleep(POLL_MS * 2); // a repeat would come now
    const repeats = new Map<string, number>();
    for (const r of receiver.received) repeats.set(r.deliveryId, (repeats.get(r.deliveryId) ?? 0) + 1);
    const counts = await outboxCounts(sides.on);
    const drainMs = drains.reduce((a, d) => a + d.ms, 0);
    const drain: DrainFigure = {
      events,
      concurrency: shape.concurrency,
      answerDelayMs: shape.answerDelayMs,
      batches: drains,
      drainMs,
      deliveriesPerSecond: Math.round((events / drainMs) * 1000),
      distinctReceived: repeats.size,
      duplicates: [...repeats.values()].reduce((a, n) => a + n - 1, 0),
      missing: events - repeats.size,
      deliveredInOutbox: counts.delivered,
      attemptsInOutbox: counts.attempts,
    };
    await sides.on.sender.stop();

    // 3. a backlog written while no sender runs (the events' own cost, beside as many job ends
    // without), then drained by a sender of the default concurrency started afresh
    const backlogJobs = Math.ceil(shape.defaultBacklog / shape.subscriptions);
    let writing = performance.now();
    await endJobs(sides.on, backlogJobs, shape.enders);
    const writeMs = Math.round(performance.now() - writing);
    writing = performance.now();
    await endJobs(sides.off, backlogJobs, shape.enders);
    const besideMs = Math.round(performance.now() - writing);
    await sides.off.sender.stop();
    const fresh = new NotificationSender({
      outbox: sides.on.outbox,
      subscriptions: sides.on.subscriptions,
      logger: capture.logger,
      pollMs: POLL_MS,
    });
    senders.push(fresh);
    const before = receiver.received.length;
    const backlog = backlogJobs * shape.subscriptions;
    const started = Date.now();
    fresh.start();
    await receiver.until(before + backlog, 600_000, 'default concurrency');
    const ms = Math.max(...receiver.received.slice(before).map((r) => r.at)) - started;
    await fresh.stop();
    const perSecond = Math.round((backlog / ms) * 10_000) / 10;
    return {
      store: factory.name,
      latency: [told, polled],
      throughput: {
        jobEnds: shape.jobEnds,
        subscriptions: shape.subscriptions,
        enders: shape.enders,
        batches,
        onMs,
        offMs,
        onPerSecond: Math.round((shape.jobEnds / onMs) * 1000),
        offPerSecond: Math.round((shape.jobEnds / offMs) * 1000),
        ratio: Math.round((onMs / offMs) * 100) / 100,
        writeOnly: { jobs: backlogJobs, ms: writeMs, besideMs, ratio: Math.round((writeMs / besideMs) * 100) / 100 },
      },
      drain,
      defaultConcurrency: {
        concurrency: DEFAULT_CONCURRENCY,
        events: backlog,
        ms,
        perSecond,
        extrapolatedMs: Math.round((events / perSecond) * 1000),
      },
      warnings: capture
        .text()
        .split('\n')
        .filter((l) => /Notification/.test(l)).length,
    };
  } finally {
    for (const s of senders) await s.stop().catch(() => undefined);
    for (const dispose of disposers.reverse()) await dispose().catch(() => undefined);
  }
}

/** issue 37's targets */
export const LATENCY_TARGET_MS = 1000;
export const THROUGHPUT_RATIO_TARGET = 1.1;

/** The figure's lines, with their verdicts. */
export function describeNotifications(f: NotificationsFigure): string[] {
  const verdict = (ok: boolean) => (ok ? 'target met' : 'TARGET MISSED');
  const name = f.store.padEnd(10);
  const lines = f.latency.map(
    (l) =>
      `${name} delivery latency, ${l.case === 'told' ? "job end committed by the sender's own JobRepository (told at once)" : `job end committed by another connection (seen by the ${POLL_MS} ms poll)`}: ` +
      `median ${l.medianMs} ms (${verdict(l.medianMs <= LATENCY_TARGET_MS)}: <= ${LATENCY_TARGET_MS}), max ${l.maxMs} ms, from the job's endTime ${l.fromEndTimeMedianMs} ms; samples ${l.samplesMs.join(' ')}`,
  );
  const t = f.throughput;
  lines.push(
    `${name} store level, the bookkeeping's worst case (no process runs: JobRepository create → claim → finish): ${t.jobEnds.toLocaleString('en')} job ends with ${t.subscriptions} webhook subscriptions each, ${t.enders} at a time: ${t.onMs} ms, ${t.onPerSecond}/s | ` +
      `no subscriptions: ${t.offMs} ms, ${t.offPerSecond}/s | ratio ${t.ratio.toFixed(2)} (store level: no target; the <= ${THROUGHPUT_RATIO_TARGET} is on real jobs); ` +
      `batches ${t.batches.map((b) => `${b.side} ${b.ms}`).join(', ')}`,
    `${name} of which the events' own writes: ${t.writeOnly.jobs.toLocaleString('en')} job ends with the subscriptions and no sender running ${t.writeOnly.ms} ms ` +
      `vs as many with none right after ${t.writeOnly.besideMs} ms = ${t.writeOnly.ratio.toFixed(2)}× (the rest of the ratio: the sender's reads and records beside the job ends)`,
  );
  const d = f.drain;
  const once =
    d.duplicates === 0 && d.missing === 0 && d.deliveredInOutbox === d.events && d.attemptsInOutbox === d.events;
  lines.push(
    `${name} drain of ${d.events.toLocaleString('en')} events (receiver answers after ${d.answerDelayMs} ms, sender concurrency ${d.concurrency}): ` +
      `${d.drainMs} ms = ${d.deliveriesPerSecond} deliveries/s (each batch's first job end → its last event received: ` +
      `${d.batches.map((x) => `${x.ms} ms, ${x.backlogAtLastEnd} after its last end, ${x.afterLastEndMs} ms after it`).join('; ')}) | ` +
      `${once ? 'each delivered exactly once' : 'NOT EXACTLY ONCE'} (${d.distinctReceived} delivery ids, ${d.duplicates} repeats, ${d.missing} missing; outbox: ${d.deliveredInOutbox} delivered, ${d.attemptsInOutbox} attempts)`,
  );
  const c = f.defaultConcurrency;
  lines.push(
    `${name} the default concurrency ${c.concurrency}: a backlog of ${c.events} events drained in ${c.ms} ms = ${c.perSecond} deliveries/s ` +
      `(${d.events.toLocaleString('en')} events at that rate: ${Math.round(c.extrapolatedMs / 1000)} s)` +
      (f.warnings ? ` | ${f.warnings} sender warnings` : ''),
  );
  return lines;
}
