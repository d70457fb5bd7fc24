import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServe } from '../test/support/cli.js';
import { call, startWorker } from '../test/support/queue.js';
import { startRemoteReceiver, THROUGHPUT_RATIO_TARGET, type RemoteReceiver } from './notifications-bench.js';
import { inPostgresSchema, KEY, postJobs, prepareStore, stop, untilAllFinished, withApi } from './queue-bench.js';

export interface RealJobsShape {
  /** jobs of each side (with notifications on, and as many with none) */
  jobs: number;
  /** runs of each side, alternating on / off */
  batches: number;
  /** webhook subscriptions created for every "on" run */
  subscriptions: number;
  /** the receiver answers each POST after this long */
  answerDelayMs: number;
  /** one-request configurations the jobs go round */
  configurations: number;
}

export interface RealJobsRun {
  side: 'on' | 'off';
  jobs: number;
  /** first POST /jobs → the last job seen finished (polled 50 ms apart) */
  ms: number;
  /** "on": the last job seen finished → the run's last event received (≤ 0: all in before it) */
  drainLagMs?: number;
  /** "on": events received after the last job was seen finished */
  afterLastEnd?: number;
}

export interface RealJobsFigure {
  store: 'SQLite' | 'PostgreSQL';
  /** the processes that ran the jobs */
  setup: string;
  jobs: number;
  subscriptions: number;
  answerDelayMs: number;
  runs: RealJobsRun[];
  onMs: number;
  offMs: number;
  onPerSecond: number;
  offPerSecond: number;
  /** on / off, the runs' wall times added up */
  ratio: number;
  /** each batch's on / off (its two runs, one right after the other) */
  batchRatios: number[];
  /** their median: the figure the target is on (a shared machine's spike moves one pair, not the median) */
  medianRatio: number;
  /** events expected (the "on" jobs', the warm-up's included, × subscriptions), delivery ids received, repeats, missing */
  events: number;
  distinctReceived: number;
  duplicates: number;
  missing: number;
  /** "on" jobs with other than `subscriptions` distinct deliveries, and events for "off" jobs or jobs of no run */
  wrongJobs: number;
  drainLagMaxMs: number;
}

const WEBHOOK = 'webhook';

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : Math.round(((sorted[mid - 1] + sorted[mid]) / 2) * 100) / 100;
};

/** One store's server: its URL, a token, the configurations the jobs go round. */
interface Served {
  url: string;
  token: string;
  configs: string[];
}

async function subscribe(s: Served, receiver: RemoteReceiver, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const made = await call(s.url, s.token, 'POST', '/project-subscriptions', {
      event: 'job-succeeded',
      recipient: { channel: WEBHOOK, url: `${receiver.url}/hook/${i}` },
    });
    if (made.status !== 201)
      throw new Error(`POST /project-subscriptions: ${made.status} ${JSON.stringify(made.body)}`);
    ids.push(String(made.body.id));
  }
  return ids;
}

async function unsubscribe(s: Served, ids: string[]): Promise<void> {
  for (const id of ids) {
    const gone = await call(s.url, s.token, 'DELETE', `/project-subscriptions/${id}`);
    if (gone.status !== 204) throw new Error(`DELETE /project-subscriptions/${id}: ${gone.status}`);
  }
}

/** `count` jobs through the Queue API, all `success`: their ids and the time first POST → last seen finished. */
async function runJobs(s: Served, count: number): Promise<{ ids: string[]; started: number; finished: number }> {
  const started = Date.now();
  const ids = await postJobs(s.url, s.token, s.configs, count);
  const jobs = await untilAllFinished(s.url, s.token, ids);
  const finished = Date.now();
  const failed = jobs.filter((j) => j.status !== 'success');
  if (failed.length)
    throw new Error(`${failed.length} jobs not success, e.g. ${JSON.stringify(failed[0]).slice(0, 400)}`);
  return { ids, started, finished };
}

/**
 * Real job throughput with notifications on against none, on one server's jobs: runs alternating,
 * each "on" run with `subscriptions` webhooks created through the Notification API beforehand and
 * deleted once the receiver has every event of its jobs; each event's delivery counted at the end.
 */
async function measure(
  store: RealJobsFigure['store'],
  setup: string,
  s: Served,
  shape: RealJobsShape,
): Promise<RealJobsFigure> {
  const receiver = await startRemoteReceiver();
  try {
    receiver.answerAfter(shape.answerDelayMs);
    // warm-up, each side: every configuration once (the workers' first runs, the sender's first deliveries)
    const onJobs = new Set<string>();
    const warming = await subscribe(s, receiver, shape.subscriptions);
    for (const id of (await runJobs(s, shape.configurations)).ids) onJobs.add(id);
    await receiver.until(shape.configurations * shape.subscriptions, 60_000, `${store}: the warm-up's events`);
    await unsubscribe(s, warming);
    await runJobs(s, shape.configurations);
    const perRun = Math.ceil(shape.jobs / shape.batches);
    const runs: RealJobsRun[] = [];
    const batchRatios: number[] = [];
    const done = { on: 0, off: 0 };
    for (let b = 0; b < shape.batches; b++) {
      const pair = runs.length;
      for (const side of b % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const jobs = Math.min(perRun, shape.jobs - done[side]);
        if (jobs <= 0) continue;
        done[side] += jobs;
        if (side === 'off') {
          const r = await runJobs(s, jobs);
          runs.push({ side, jobs, ms: r.finished - r.started });
          continue;
        }
        const subscriptions = await subscribe(s, receiver, shape.subscriptions);
        const before = receiver.received.length;
        const r = await runJobs(s, jobs);
        for (const id of r.ids) onJobs.add(id);
        await receiver.until(before + jobs * shape.subscriptions, 600_000, `${store}: the run's events`);
        const mine = receiver.received.slice(before);
        const lastAt = Math.max(...mine.map((x) => x.at));
        runs.push({
          side,
          jobs,
          ms: r.finished - r.started,
          drainLagMs: lastAt - r.finished,
          afterLastEnd: mine.filter((x) => x.at > r.finished).length,
        });
        await unsubscribe(s, subscriptions);
      }
      const [on, off] = (['on', 'off'] as const).map((side) => runs.slice(pair).find((x) => x.side === side));
      if (on && off) batchRatios.push(Math.round((on.ms / off.ms) * 100) / 100);
    }
    await sleep(2000); // a repeat (a lease run out, another process's sender) would come now
    const events = onJobs.size * shape.subscriptions;
    const byDelivery = new Map<string, number>();
    const byJob = new Map<string, Set<string>>();
    for (const x of receiver.received) {
      byDelivery.set(x.deliveryId, (byDelivery.get(x.deliveryId) ?? 0) + 1);
      byJob.set(x.jobId, (byJob.get(x.jobId) ?? new Set()).add(x.deliveryId));
    }
    let wrongJobs = 0;
    for (const id of onJobs) if (byJob.get(id)?.size !== shape.subscriptions) wrongJobs++;
    for (const id of byJob.keys()) if (!onJobs.has(id)) wrongJobs++;
    const sum = (side: 'on' | 'off') => runs.filter((x) => x.side === side).reduce((a, x) => a + x.ms, 0);
    const onMs = sum('on');
    const offMs = sum('off');
    return {
      store,
      setup,
      jobs: shape.jobs,
      subscriptions: shape.subscriptions,
      answerDelayMs: shape.answerDelayMs,
      runs,
      onMs,
      offMs,
      onPerSecond: Math.round((shape.jobs / onMs) * 10_000) / 10,
      offPerSecond: Math.round((shape.jobs / offMs) * 10_000) / 10,
      ratio: Math.round((onMs / offMs) * 100) / 100,
      batchRatios,
      medianRatio: median(batchRatios),
      events,
      distinctReceived: byDelivery.size,
      duplicates: [...byDelivery.values()].reduce((a, n) => a + n - 1, 0),
      missing: Math.max(0, events - byDelivery.size),
      wrongJobs,
      drainLagMaxMs: Math.max(...runs.map((x) => x.drainLagMs ?? -Infinity)),
    };
  } finally {
    await receiver.close();
  }
}

/** SQLite: one `gex serve --workers 4` runs the jobs and sends their notifications. */
export async function sqliteRealJobs(shape: RealJobsShape): Promise<RealJobsFigure> {
  return withApi(async (api) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-bench-notify-jobs-'));
    const location = path.join(dir, 'store.sqlite');
    const served = await startServe(['--store', location, '--workers', '4'], KEY);
    try {
      const { token, configs } = await prepareStore(location, api, served.url, shape.configurations);
      return await measure('SQLite', 'gex serve --workers 4', { url: served.url, token, configs }, shape);
    } finally {
      await stop([served.child]);
      await rm(dir, { recursive: true, force: true });
    }
  });
}

/** PostgreSQL: a server that runs nothing and two `gex worker --concurrency 2` (queue-bench's setup). */
export async function postgresRealJobs(postgresUrl: string, shape: RealJobsShape): Promise<RealJobsFigure> {
  return withApi(async (api) => {
    let figure: RealJobsFigure | undefined;
    await inPostgresSchema(postgresUrl, async (location) => {
      const served = await startServe(['--store', location, '--workers', '0'], KEY);
      const children = [served.child];
      try {
        const { token, configs } = await prepareStore(location, api, served.url, shape.configurations);
        for (const worker of await Promise.all([1, 2].map(() => startWorker(location, KEY, ['--concurrency', '2']))))
          children.push(worker.child);
        figure = await measure(
          'PostgreSQL',
          'gex serve --workers 0 + 2 × gex worker --concurrency 2',
          { url: served.url, token, configs },
          shape,
        );
      } finally {
        await stop(children);
      }
    });
    return figure!;
  });
}

/** The figure's line, with its verdicts. */
export function describeRealJobs(f: RealJobsFigure): string {
  const verdict = (ok: boolean) => (ok ? 'target met' : 'TARGET MISSED');
  const once = f.duplicates === 0 && f.missing === 0 && f.wrongJobs === 0 && f.distinctReceived === f.events;
  return (
    `${f.store.padEnd(10)} real jobs (${f.setup}; each a gex run of one request, POSTed to /jobs, first POST → last finished): ` +
    `${f.jobs} jobs with ${f.subscriptions} webhook subscriptions each (answers after ${f.answerDelayMs} ms) ${f.onMs} ms, ${f.onPerSecond}/s | ` +
    `no subscriptions: ${f.offMs} ms, ${f.offPerSecond}/s | ratio, median of the batches' ${f.medianRatio.toFixed(2)} (${verdict(f.medianRatio <= THROUGHPUT_RATIO_TARGET)}: <= ${THROUGHPUT_RATIO_TARGET}; batches ${f.batchRatios.map((r) => r.toFixed(2)).join(' ')}; of the sums ${f.ratio.toFixed(2)}); ` +
    `runs ${f.runs.map((r) => `${r.side} ${r.ms}`).join(', ')} | ` +
    `drain after the last job seen finished (polled 50 ms apart; <= 0: every event in before it): ${f.runs
      .filter((r) => r.side === 'on')
      .map((r) => `${r.drainLagMs} ms (${r.afterLastEnd} events after it)`)
      .join(', ')} | ` +
    `${once ? 'each event delivered exactly once' : 'NOT EXACTLY ONCE'} (${f.events} expected, ${f.distinctReceived} delivery ids, ${f.duplicates} repeats, ${f.missing} missing, ${f.wrongJobs} jobs with wrong deliveries)`
  );
}
