import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import pg from 'pg';
import { startFixtureServer, type FixtureServer } from '../test/support/fixture-server/fixture-server.js';
import { runGex, startServe } from '../test/support/cli.js';
import { call, startWorker, type Json } from '../test/support/queue.js';
import { inSchema, withPostgresClient } from '../test/support/store.js';

const KEY = { GEX_MASTER_KEY: '6f'.repeat(32) };
const CONFIGS = '/v2/storage/branch/default/components/ex-generic-v2/configs';
const FLOWS = '/v2/storage/branch/default/components/keboola.orchestrator/configs';
/** how often both sides look at their jobs (the script's phase barrier, the flow's end) */
const POLL_MS = 50;

export interface FlowsShape {
  phases: number;
  tasksPerPhase: number;
  /** the local API answers each task's one request after this long */
  apiDelayMs: number;
  /** runs of each side, alternating flow / script */
  repetitions: number;
}

/** One run of one side: wall time and what the store and the API saw. */
export interface FlowsRun {
  side: 'flow' | 'script';
  /** POST of the first job → its end seen by a poll every 50 ms (the flow: its root; the script: the last phase) */
  wallMs: number;
  /** the store's own span: the first job created → the last ended (queue_jobs, ms) */
  storeMs: number;
  /** per phase transition: the phase's last task `ended` → the next phase's first task `started` (queue_jobs) */
  gapsMs: number[];
  /** per phase transition: the phase's last answer from the API → the next phase's first request at it */
  apiGapsMs: number[];
}

export interface FlowsFigure {
  store: 'SQLite' | 'PostgreSQL';
  /** `gex serve --workers 4` (SQLite); `gex serve --workers 0` + `gex worker --concurrency 2` × 2 (PostgreSQL) */
  setup: string;
  phases: number;
  tasksPerPhase: number;
  apiDelayMs: number;
  workers: number;
  runs: FlowsRun[];
  flowMedianMs: number;
  scriptMedianMs: number;
  /** flow / script, medians of wall times */
  ratio: number;
  /** flow / script, medians of the store's spans */
  storeRatio: number;
  /** every transition of every flow run */
  gapSamplesMs: number[];
  gapMedianMs: number;
  /** the script's transitions (its poll + POSTs), the same measure */
  scriptGapMedianMs: number;
  apiGapMedianMs: number;
  scriptApiGapMedianMs: number;
  /** precision of the Queue API's startTime / endTime (whole seconds: the store's rows are read instead) */
  wireTimes: 'seconds' | 'milliseconds';
}

const median = (values: number[]) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : Math.round(((sorted[mid - 1] + sorted[mid]) / 2) * 10) / 10;
};

async function stop(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
}

/** created / started / ended of jobs, read from the store's queue_jobs rows (ms precision) */
type Times = Map<string, { created: number; started: number; ended: number }>;
interface StoreReader {
  times(ids: string[]): Promise<Times>;
  close(): Promise<void>;
}

function toTimes(rows: Array<{ id: unknown; created: string; started: string | null; ended: string | null }>): Times {
  const at = (iso: string | null) => (iso === null ? NaN : Date.parse(iso));
  return new Map(
    rows.map((r) => [String(r.id), { created: at(r.created), started: at(r.started), ended: at(r.ended) }]),
  );
}

function sqliteReader(file: string): StoreReader {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  return {
    times: (ids) =>
      Promise.resolve(
        toTimes(
          db
            .prepare(`SELECT id, created, started, ended FROM queue_jobs WHERE id IN (${ids.map(() => '?').join(',')})`)
            .all(...ids.map(Number)) as never,
        ),
      ),
    close: () => {
      db.close();
      return Promise.resolve();
    },
  };
}

async function postgresReader(url: string): Promise<StoreReader> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    times: async (ids) =>
      toTimes(
        (
          await client.query('SELECT id, created, started, ended FROM queue_jobs WHERE id = ANY($1::bigint[])', [
            ids.map(Number),
          ])
        ).rows,
      ),
    close: () => client.end(),
  };
}

/** when each tag's request reached the API and was answered */
type Calls = Map<string, { arrived: number; answered: number }>;

async function withApi<T>(delayMs: number, work: (api: FixtureServer, calls: Calls) => Promise<T>): Promise<T> {
  const calls: Calls = new Map();
  const api = await startFixtureServer({
    record: false,
    handler: async (r) => {
      const tag = new URL(r.url, 'http://x').searchParams.get('tag') ?? '?';
      const arrived = Date.now();
      await sleep(delayMs);
      calls.set(tag, { arrived, answered: Date.now() });
      return { body: { data: [{ id: 1, tag }] } };
    },
  });
  try {
    return await work(api, calls);
  } finally {
    await api.close();
  }
}

interface Prepared {
  token: string;
  /** per phase, its tasks' configurations (tag and id), in the flow's order */
  phases: Array<Array<{ tag: string; config: string }>>;
  flow: string;
}

/** A token, phases × tasks one-request configurations and the keboola.orchestrator flow of them. */
async function prepare(location: string, url: string, api: FixtureServer, shape: FlowsShape): Promise<Prepared> {
  const made = await runGex(['tokens', 'create', '--description', 'bench', '--store', location], KEY);
  if (made.code !== 0) throw new Error(made.stderr);
  const token = made.stdout.trim();
  const phases: Prepared['phases'] = [];
  const tasks: Json[] = [];
  for (let p = 1; p <= shape.phases; p++) {
    const list: Prepared['phases'][number] = [];
    for (let t = 1; t <= shape.tasksPerPhase; t++) {
      const tag = `p${p}t${t}`;
      const configuration = {
        parameters: {
          api: { baseUrl: `${api.url}/v1/` },
          config: { outputBucket: `flows-${tag}`, jobs: [{ endpoint: 'users', dataField: 'data', params: { tag } }] },
        },
      };
      const created = await call(url, token, 'POST', CONFIGS, { name: tag, configuration });
      if (created.status !== 201) throw new Error(JSON.stringify(created.body));
      const config = String(created.body.id);
      list.push({ tag, config });
      tasks.push({
        id: p * 100 + t,
        name: tag,
        phase: p,
        enabled: true,
        continueOnFailure: false,
        task: { componentId: 'ex-generic-v2', configId: config, mode: 'run' },
      });
    }
    phases.push(list);
  }
  const configuration = {
    phases: phases.map((_, i) => ({ id: i + 1, name: `phase ${i + 1}`, dependsOn: i === 0 ? [] : [i] })),
    tasks,
  };
  const flow = await call(url, token, 'POST', FLOWS, { name: 'bench flow', configuration });
  if (flow.status !== 201) throw new Error(JSON.stringify(flow.body));
  return { token, phases, flow: String(flow.body.id) };
}

/** Jobs polled together (GET /search/jobs?id[]=…) every POLL_MS until every one is finished. */
async function untilAllFinished(url: string, token: string, ids: string[], timeoutMs = 300_000): Promise<Json[]> {
  const end = Date.now() + timeoutMs;
  const query = `${ids.map((id) => `id[]=${id}`).join('&')}&limit=${ids.length}`;
  for (;;) {
    const jobs = (await call(url, token, 'GET', `/search/jobs?${query}`)).body as unknown as Json[];
    if (jobs.length === ids.length && jobs.every((j) => j.isFinished === true)) return jobs;
    if (Date.now() > end) throw new Error(`jobs not finished in ${timeoutMs} ms: ${JSON.stringify(jobs)}`);
    await sleep(POLL_MS);
  }
}

function checkSucceeded(jobs: Json[], what: string): void {
  const failed = jobs.filter((j) => j.status !== 'success');
  if (failed.length) throw new Error(`${what}: ${failed.map((j) => `${j.id} ${j.status}`).join(', ')}`);
}

/** The per-transition gaps of phases of job ids: store (`ended` → `started`) and API (answered → arrived). */
function transitions(
  phases: Array<Array<{ tag: string; id: string }>>,
  times: Times,
  calls: Calls,
): Pick<FlowsRun, 'gapsMs' | 'apiGapsMs' | 'storeMs'> {
  const gapsMs: number[] = [];
  const apiGapsMs: number[] = [];
  for (let p = 1; p < phases.length; p++) {
    const lastEnd = Math.max(...phases[p - 1].map((t) => times.get(t.id)!.ended));
    const firstStart = Math.min(...phases[p].map((t) => times.get(t.id)!.started));
    gapsMs.push(firstStart - lastEnd);
    const lastAnswer = Math.max(...phases[p - 1].map((t) => calls.get(t.tag)!.answered));
    const firstArrival = Math.min(...phases[p].map((t) => calls.get(t.tag)!.arrived));
    apiGapsMs.push(firstArrival - lastAnswer);
  }
  const all = phases.flat().map((t) => times.get(t.id)!);
  const storeMs = Math.max(...all.map((t) => t.ended)) - Math.min(...all.map((t) => t.created));
  return { gapsMs, apiGapsMs, storeMs };
}

/** The flow run: POST of the root, its end polled; the tree read through the Queue API, its times from the store. */
async function runFlow(
  url: string,
  prepared: Prepared,
  reader: StoreReader,
  calls: Calls,
): Promise<FlowsRun & { wire: Json }> {
  const { token } = prepared;
  calls.clear();
  const started = performance.now();
  const root = (await call(url, token, 'POST', '/jobs', { component: 'keboola.orchestrator', config: prepared.flow }))
    .body;
  if (!root.id) throw new Error(`flow not started: ${JSON.stringify(root)}`);
  const [done] = await untilAllFinished(url, token, [String(root.id)]);
  const wallMs = Math.round(performance.now() - started);
  if (done.status !== 'success')
    throw new Error(`flow ${root.id} ended ${done.status}: ${JSON.stringify(done.result)}`);
  const tree = (await call(url, token, 'GET', `/search/jobs?parentRunId=${root.runId}&limit=500`))
    .body as unknown as Json[];
  const tasks = tree.filter((j) => j.type === 'standard');
  checkSucceeded(tasks, `flow ${root.id}`);
  const byTask = new Map(tasks.map((j) => [String(j.orchestrationTaskId), String(j.id)]));
  const phases = prepared.phases.map((list, p) =>
    list.map((t, i) => ({ tag: t.tag, id: byTask.get(String((p + 1) * 100 + i + 1))! })),
  );
  const times = await reader.times([String(root.id), ...phases.flat().map((t) => t.id)]);
  const figures = transitions(phases, times, calls);
  // the flow's span is its root's (created with the first phase's jobs, ended with the last task)
  const rootTimes = times.get(String(root.id))!;
  return { side: 'flow', wallMs, ...figures, storeMs: rootTimes.ended - rootTimes.created, wire: tasks[0] };
}

/** The yardstick: the same jobs POSTed in the same order, phase by phase, each phase awaited by polling. */
async function runScript(url: string, prepared: Prepared, reader: StoreReader, calls: Calls): Promise<FlowsRun> {
  const { token } = prepared;
  calls.clear();
  const phases: Array<Array<{ tag: string; id: string }>> = [];
  const started = performance.now();
  for (const list of prepared.phases) {
    const ids: Array<{ tag: string; id: string }> = [];
    for (const { tag, config } of list) {
      const job = (await call(url, token, 'POST', '/jobs', { component: 'ex-generic-v2', config })).body;
      if (!job.id) throw new Error(`job not created: ${JSON.stringify(job)}`);
      ids.push({ tag, id: String(job.id) });
    }
    checkSucceeded(
      await untilAllFinished(
        url,
        token,
        ids.map((j) => j.id),
      ),
      'script',
    );
    phases.push(ids);
  }
  const wallMs = Math.round(performance.now() - started);
  const times = await reader.times(phases.flat().map((t) => t.id));
  return { side: 'script', wallMs, ...transitions(phases, times, calls) };
}

/** Both sides on one running setup, alternating flow / script `repetitions` times, after a warm-up job. */
async function measure(
  store: FlowsFigure['store'],
  setup: string,
  location: string,
  url: string,
  reader: () => Promise<StoreReader>,
  api: FixtureServer,
  calls: Calls,
  shape: FlowsShape,
): Promise<FlowsFigure> {
  const prepared = await prepare(location, url, api, shape);
  const warm = (
    await call(url, prepared.token, 'POST', '/jobs', {
      component: 'ex-generic-v2',
      config: prepared.phases[0][0].config,
    })
  ).body;
  await untilAllFinished(url, prepared.token, [String(warm.id)]);
  const read = await reader();
  const runs: FlowsRun[] = [];
  let wire: Json | undefined;
  try {
    for (let i = 0; i < shape.repetitions; i++) {
      // alternate which side goes first, so that a trend on the machine weighs on both
      for (const side of i % 2 === 0 ? (['flow', 'script'] as const) : (['script', 'flow'] as const)) {
        if (side === 'flow') {
          const { wire: task, ...run } = await runFlow(url, prepared, read, calls);
          wire = task;
          runs.push(run);
        } else runs.push(await runScript(url, prepared, read, calls));
      }
    }
  } finally {
    await read.close();
  }
  const of = (side: FlowsRun['side']) => runs.filter((r) => r.side === side);
  const flowMedianMs = median(of('flow').map((r) => r.wallMs));
  const scriptMedianMs = median(of('script').map((r) => r.wallMs));
  const gapSamplesMs = of('flow').flatMap((r) => r.gapsMs);
  const fractional = /\.\d+/.test(String(wire?.startTime)) && /\.\d+/.test(String(wire?.endTime));
  return {
    store,
    setup,
    phases: shape.phases,
    tasksPerPhase: shape.tasksPerPhase,
    apiDelayMs: shape.apiDelayMs,
    workers: 4,
    runs,
    flowMedianMs,
    scriptMedianMs,
    ratio: Math.round((flowMedianMs / scriptMedianMs) * 100) / 100,
    storeRatio:
      Math.round((median(of('flow').map((r) => r.storeMs)) / median(of('script').map((r) => r.storeMs))) * 100) / 100,
    gapSamplesMs,
    gapMedianMs: median(gapSamplesMs),
    scriptGapMedianMs: median(of('script').flatMap((r) => r.gapsMs)),
    apiGapMedianMs: median(of('flow').flatMap((r) => r.apiGapsMs)),
    scriptApiGapMedianMs: median(of('script').flatMap((r) => r.apiGapsMs)),
    wireTimes: fractional ? 'milliseconds' : 'seconds',
  };
}

/** SQLite: one `gex serve --workers 4`. */
export async function sqliteFlows(shape: FlowsShape): Promise<FlowsFigure> {
  return withApi(shape.apiDelayMs, async (api, calls) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-bench-flows-'));
    try {
      const location = path.join(dir, 'store.sqlite');
      const served = await startServe(['--store', location, '--workers', '4'], KEY);
      try {
        return await measure(
          'SQLite',
          'gex serve --workers 4',
          location,
          served.url,
          () => Promise.resolve(sqliteReader(location)),
          api,
          calls,
          shape,
        );
      } finally {
        await stop([served.child]);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}

/** PostgreSQL: a server that runs nothing and two `gex worker --concurrency 2`, in a schema of their own. */
export async function postgresFlows(postgresUrl: string, shape: FlowsShape): Promise<FlowsFigure> {
  return withApi(shape.apiDelayMs, async (api, calls) => {
    const schema = `gex_bench_flows_${randomBytes(4).toString('hex')}`;
    await withPostgresClient(postgresUrl, (c) => c.query(`CREATE SCHEMA ${schema}`));
    try {
      const location = inSchema(postgresUrl, schema);
      const served = await startServe(['--store', location, '--workers', '0'], KEY);
      const children = [served.child];
      try {
        for (const worker of await Promise.all([1, 2].map(() => startWorker(location, KEY, ['--concurrency', '2']))))
          children.push(worker.child);
        return await measure(
          'PostgreSQL',
          'gex serve --workers 0 + 2 × gex worker --concurrency 2',
          location,
          served.url,
          () => postgresReader(location),
          api,
          calls,
          shape,
        );
      } finally {
        await stop(children);
      }
    } finally {
      await withPostgresClient(postgresUrl, (c) =>
        c.query(`DROP SCHEMA ${schema} CASCADE; DROP SCHEMA IF EXISTS ${schema}_pgboss CASCADE`),
      );
    }
  });
}

/** issue 35's targets */
export const FLOW_RATIO_TARGET = 1.15;
export const FLOW_GAP_TARGET_MS = 100;

/** The figure's lines, with their verdicts. */
export function describeFlows(f: FlowsFigure): string[] {
  const verdict = (ok: boolean) => (ok ? 'target met' : 'TARGET MISSED');
  const walls = (side: FlowsRun['side']) =>
    f.runs
      .filter((r) => r.side === side)
      .map((r) => r.wallMs)
      .join(' ');
  const name = f.store.padEnd(10);
  return [
    `${name} ${f.phases} phases × ${f.tasksPerPhase} tasks (API ${f.apiDelayMs} ms), ${f.setup}: flow ${f.flowMedianMs} ms (${walls('flow')}) | ` +
      `script ${f.scriptMedianMs} ms (${walls('script')}) | ratio ${f.ratio.toFixed(2)} (${verdict(f.ratio <= FLOW_RATIO_TARGET)}: <= ${FLOW_RATIO_TARGET}); ` +
      `store spans ratio ${f.storeRatio.toFixed(2)}`,
    `${name} a phase's last task ended → the next phase's first processing (store rows, ms; the Queue API's times are ${f.wireTimes === 'seconds' ? 'whole seconds' : 'in ms'}): ` +
      `flow median ${f.gapMedianMs} ms (${verdict(f.gapMedianMs <= FLOW_GAP_TARGET_MS)}: <= ${FLOW_GAP_TARGET_MS}), samples ${f.gapSamplesMs.join(' ')} | ` +
      `script median ${f.scriptGapMedianMs} ms | at the API (last answer → next request, incl. gex run's start): flow ${f.apiGapMedianMs} ms, script ${f.scriptApiGapMedianMs} ms`,
  ];
}
