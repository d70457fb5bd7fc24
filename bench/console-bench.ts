import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_BRANCH } from '../src/jobs/job-request.js';
import { fromPlain, type JsonValue } from '../src/json/index.js';
import type { JobEvent, NewJob } from '../src/jobs/job-record.js';
import { JobRepository, type Outcome } from '../src/jobs/job-repository.js';
import type { EmbeddedBackend } from '../src/store/embedded/embedded-backend.js';
import { loggableUrl } from '../src/server/operations/request-log.js';
import { startServe } from '../test/support/cli.js';
import { consoleLogin } from '../test/support/console.js';
import { openEmbeddedStore } from '../test/support/open-store.js';
import { inSchema, withPostgresClient } from '../test/support/store.js';

const KEY = { GEX_MASTER_KEY: '3c'.repeat(32) };
const COMPONENT = 'ex-generic-v2';
const CONFIGS = `/v2/storage/branch/default/components/${COMPONENT}/configs`;
/** issue 36's targets: a page's server time at p95, and against the JSON call returning the same data */
export const PAGE_P95_TARGET_MS = 50;
export const PAGE_RATIO_TARGET = 1.5;

export interface ConsoleShape {
  jobs: number;
  configurations: number;
  versionsPerConfiguration: number;
  logLines: number;
  /** measured requests per page (after 10 unmeasured) */
  samples: number;
}

export interface Timing {
  /** server time per the request log's durationMs (a page of two calls: their sum) */
  serverP50Ms: number;
  serverP95Ms: number;
  /** the client's time over loopback with keep-alive (fetch + reading the body) */
  clientP50Ms: number;
  clientP95Ms: number;
  /** the server samples, sorted */
  serverSamplesMs: number[];
}

export interface PageFigure {
  name: string;
  page: string;
  /** false: the page answered 404 (not built on this branch) and was skipped */
  built: boolean;
  console?: Timing;
  /** the JSON call(s) returning the same data */
  json?: Timing & { calls: string[] };
  /** console server p95 / JSON server p95 */
  ratio?: number;
  withinTarget?: boolean;
  /** bytes of the page's answer */
  bytes?: number;
}

export interface LogPollFigure {
  /** statuses of the measured polls (an unchanged SQLite store: 204 from the change marker) */
  statuses: Record<string, number>;
  poll: Timing;
  /** GET /health, the trivial route, the same way */
  health: Timing;
  /**
   * PostgreSQL: scans of queue_job_events (pg_stat_user_tables, seq + idx) during the polls;
   * SQLite has no such counter (the 204 answers before any job or event read, see job-pages.ts)
   */
  eventsScans?: number;
}

export interface ConsoleFigure {
  store: 'SQLite' | 'PostgreSQL';
  shape: ConsoleShape;
  /** the fill, in-process through the store's classes */
  fillMs: { configurations: number; jobs: number; log: number };
  bigLogJobId: number;
  pages: PageFigure[];
  logPoll: LogPollFigure;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
const round = (n: number) => Math.round(n * 10) / 10;

function timing(server: number[], client: number[]): Timing {
  const s = [...server].sort((a, b) => a - b);
  const c = [...client].sort((a, b) => a - b);
  return {
    serverP50Ms: round(percentile(s, 50)),
    serverP95Ms: round(percentile(s, 95)),
    clientP50Ms: round(percentile(c, 50)),
    clientP95Ms: round(percentile(c, 95)),
    serverSamplesMs: s.map(round),
  };
}

/** A configuration like a real one: an API, a few endpoints, a secret. */
function configuration(i: number, version: number): JsonValue {
  return fromPlain({
    parameters: {
      api: { baseUrl: `https://api-${i}.example.com/v1/`, http: { headers: { accept: 'application/json' } } },
      config: {
        outputBucket: `bench-${i}`,
        '#token': `secret-${i}-${version}`,
        jobs: Array.from({ length: 3 }, (_, j) => ({
          endpoint: `things-${j}`,
          dataField: 'data',
          params: { page: version, size: 100 },
        })),
      },
    },
  });
}

/** `lines` log lines appended to a job 1,000 at a time. */
async function appendLog(jobs: JobRepository, job: { id: number; projectId: number }, lines: number, at: number) {
  for (let from = 0; from < lines; from += 1000) {
    const batch: Array<Pick<JobEvent, 'created' | 'level' | 'message'>> = [];
    for (let n = from; n < Math.min(from + 1000, lines); n++)
      batch.push({
        created: new Date(at + n).toISOString(),
        level: n % 500 === 0 ? 'warning' : 'info',
        message: `Fetched page ${n + 1} of things-${n % 3}: 100 records, ${4096 + (n % 97)} bytes`,
      });
    await jobs.appendEvents(job, batch);
  }
}

/**
 * The store filled in-process: `configurations` × `versionsPerConfiguration` through the backend's
 * ConfigStore (50 configurations per transaction), `jobs` finished jobs spread over them and the
 * last week through JobRepository (create, claim, finish), and one job's log of `logLines` lines
 * appended 1,000 at a time. Returns the token and the big log's job.
 */
async function fill(backend: EmbeddedBackend, shape: ConsoleShape) {
  const { token, info } = await backend.createToken({ description: 'bench' });
  const store = backend.session(info);
  let t0 = performance.now();
  const configIds: string[] = [];
  for (let from = 0; from < shape.configurations; from += 50) {
    await store.inTransaction!(async (tx) => {
      for (let i = from; i < Math.min(from + 50, shape.configurations); i++) {
        const made = await tx.createConfiguration(COMPONENT, {
          name: `configuration ${i}`,
          configuration: configuration(i, 1),
        });
        for (let v = 2; v <= shape.versionsPerConfiguration; v++)
          await tx.updateConfiguration(COMPONENT, made.id, {
            configuration: configuration(i, v),
            changeDescription: `change ${v} of configuration ${i}`,
          });
        configIds.push(made.id);
      }
    });
  }
  const configurationsMs = performance.now() - t0;

  t0 = performance.now();
  const jobs = new JobRepository(backend.db);
  const weekMs = 7 * 24 * 3600 * 1000;
  const start = Date.now() - weekMs;
  const step = weekMs / shape.jobs;
  const bigAt = Math.floor(shape.jobs / 2);
  let bigLogJobId = 0;
  let logMs = 0;
  for (let i = 0; i < shape.jobs; i++) {
    const at = start + i * step;
    const newJob: NewJob = {
      projectId: info.projectId,
      componentId: COMPONENT,
      configId: configIds[i % configIds.length],
      branchId: DEFAULT_BRANCH,
      mode: 'run',
      parentRunId: '',
      tokenId: info.id,
      tokenDescription: info.description,
      configRowIds: [],
      tag: null,
      orchestrationJobId: null,
      timeoutSeconds: null,
    };
    const job = await jobs.create(newJob, new Date(at));
    if (!(await jobs.claim(job.id, 'bench-filler', new Date(at + 50)))) throw new Error(`job ${job.id} not claimed`);
    if (i === bigAt) {
      bigLogJobId = job.id;
      const logStarted = performance.now();
      await appendLog(jobs, { id: job.id, projectId: info.projectId }, shape.logLines, at);
      logMs = performance.now() - logStarted;
    }
    const failed = i % 13 === 0;
    const outcome: Outcome = () => ({
      status: failed ? 'error' : 'success',
      result: {
        message: failed ? 'The API answered 500.' : 'Component processing finished.',
        configVersion: String(shape.versionsPerConfiguration),
        output: { tables: [] },
        ...(failed ? { error: { type: 'user' as const, message: 'The API answered 500.' } } : {}),
      },
    });
    if (!(await jobs.finish(job.id, outcome, new Date(at + 50 + (i % 300) * 1000))))
      throw new Error(`job ${job.id} not finished`);
  }
  const jobsMs = performance.now() - t0 - logMs;
  return {
    token,
    configIds,
    bigLogJobId,
    fillMs: { configurations: Math.round(configurationsMs), jobs: Math.round(jobsMs), log: Math.round(logMs) },
  };
}

interface Request {
  path: string;
  headers: Record<string, string>;
}

interface LoggedRequest {
  reqId: number;
  status: number;
  durationMs: number;
  route: string;
  url: string;
}

/** The request log lines (JSON) of the server's output from character `from` on, in request order. */
function requestLines(output: string, from: number): LoggedRequest[] {
  const lines: LoggedRequest[] = [];
  for (const line of output.slice(from).split('\n')) {
    if (!line.startsWith('{')) continue;
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (parsed.msg !== 'request' || typeof parsed.durationMs !== 'number') continue;
    const id = /^req-([0-9a-z]+)$/.exec(String(parsed.reqId));
    lines.push({
      reqId: id ? parseInt(id[1], 36) : lines.length,
      status: Number(parsed.status),
      durationMs: parsed.durationMs,
      route: String(parsed.route),
      url: String(parsed.url),
    });
  }
  return lines.sort((a, b) => a.reqId - b.reqId);
}

interface Served {
  url: string;
  output: () => string;
}

/**
 * `samples` rounds (after `warmUp` unmeasured) of each group in turn, each group's requests one
 * after the other (so a page and its JSON calls see the same moment of the machine); per group
 * and round the sum of its requests' server times (request log) and client times.
 */
async function measureGroups(served: Served, groups: Request[][], samples: number, warmUp = 10) {
  const server = groups.map(() => [] as number[]);
  const client = groups.map(() => [] as number[]);
  const statuses = groups.map(() => new Map<number, number>());
  const bytes = groups.map(() => 0);
  // lines are matched to requests by URL and id order: a late line (a probe's, or one written after
  // its round ended) is never taken for another request, which would shift every later round
  let seen = -1;
  let mark = served.output().length;
  for (let round = 0; round < warmUp + samples; round++) {
    const roundStart = served.output().length;
    const clientRound: number[] = [];
    for (const [g, group] of groups.entries()) {
      let spent = 0;
      for (const r of group) {
        const t = performance.now();
        const response = await fetch(`${served.url}${r.path}`, { headers: r.headers, redirect: 'manual' });
        const body = await response.arrayBuffer();
        spent += performance.now() - t;
        statuses[g].set(response.status, (statuses[g].get(response.status) ?? 0) + 1);
        bytes[g] = body.byteLength;
      }
      clientRound.push(spent);
    }
    // the round's log lines (written as each answer ends)
    const deadline = Date.now() + 5000;
    // each request's line: the first with its URL after the lines taken so far (a probe's line or
    // one written after its round ended is never taken for another request)
    const take = (): LoggedRequest[] | undefined => {
      const after = requestLines(served.output(), mark).filter((l) => l.reqId > seen);
      const taken: LoggedRequest[] = [];
      let from = 0;
      for (const r of groups.flat()) {
        const at = after.findIndex((l, i) => i >= from && l.url === loggableUrl(r.path));
        if (at < 0) return undefined;
        taken.push(after[at]);
        from = at + 1;
      }
      return taken;
    };
    let lines = take();
    while (lines === undefined) {
      if (Date.now() > deadline) throw new Error(`the request log lines of a round were not seen in 5 s`);
      await sleep(5);
      lines = take();
    }
    seen = lines[lines.length - 1].reqId;
    mark = roundStart;
    if (round < warmUp) continue;
    let at = 0;
    for (const [g, group] of groups.entries()) {
      server[g].push(lines.slice(at, at + group.length).reduce((sum, l) => sum + l.durationMs, 0));
      at += group.length;
      client[g].push(clientRound[g]);
    }
  }
  return groups.map((_, g) => ({
    timing: timing(server[g], client[g]),
    statuses: Object.fromEntries(statuses[g]),
    bytes: bytes[g],
  }));
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** scans of the store's queue_job_events so far (PostgreSQL's statistics, flushed within a second) */
async function eventsScans(url: string, schema: string): Promise<number> {
  return withPostgresClient(url, async (c) => {
    const r = await c.query<{ n: string }>(
      `SELECT COALESCE(seq_scan, 0) + COALESCE(idx_scan, 0) AS n FROM pg_stat_user_tables
        WHERE schemaname = $1 AND relname = 'queue_job_events'`,
      [schema],
    );
    return Number(r.rows[0]?.n ?? 0);
  });
}

/** The pages of a filled store against their JSON calls, through a real `gex serve --workers 0`. */
async function measureServe(
  storeName: ConsoleFigure['store'],
  location: string,
  shape: ConsoleShape,
  postgres?: { url: string; schema: string },
): Promise<ConsoleFigure> {
  const backend = await openEmbeddedStore(location, { ...KEY, GEX_SQLITE_SYNCHRONOUS: 'normal' });
  let filled;
  try {
    filled = await fill(backend, shape);
  } finally {
    await backend.close();
  }
  const { token, configIds, bigLogJobId: id } = filled;
  console.log(
    `${storeName.padEnd(10)} filled in-process: ${shape.configurations} configurations × ${shape.versionsPerConfiguration} versions ${filled.fillMs.configurations} ms, ` +
      `${shape.jobs} jobs ${filled.fillMs.jobs} ms, a ${shape.logLines}-line log ${filled.fillMs.log} ms`,
  );
  const served = await startServe(
    [
      '--store',
      location,
      '--workers',
      '0',
      '--log-format',
      'json',
      '--log-level',
      'debug',
      '--job-retention-days',
      '3650',
    ],
    KEY,
  );
  try {
    const session = await consoleLogin(served.url, token);
    const page = (p: string): Request => ({ path: p, headers: { cookie: session.cookie } });
    const api = (p: string): Request => ({ path: p, headers: { 'x-storageapi-token': token } });
    const deepPage = Math.min(100, Math.floor(shape.jobs / 50));
    const config = configIds[Math.floor(configIds.length / 2)];
    const comparisons: Array<{ name: string; page: Request; json: Request[] }> = [
      { name: 'Jobs list, page 1', page: page('/console/jobs'), json: [api('/search/jobs?limit=50')] },
      {
        name: `Jobs list, page ${deepPage}`,
        page: page(`/console/jobs?page=${deepPage}`),
        json: [api(`/search/jobs?limit=50&offset=${(deepPage - 1) * 50}`)],
      },
      {
        name: `job page (${shape.logLines.toLocaleString('en')}-line log)`,
        page: page(`/console/jobs/${id}`),
        json: [api(`/jobs/${id}`), api(`/v2/storage/events?runId=${id}&limit=200`)],
      },
      {
        name: 'log fragment (the last 10 lines)',
        page: page(`/console/jobs/${id}/log?after=${id}:${shape.logLines - 10}`),
        json: [api(`/v2/storage/events?runId=${id}&limit=200&sinceId=${id * 1_000_000 + shape.logLines - 10}`)],
      },
      {
        name: 'Configurations list',
        page: page('/console/configurations'),
        json: [api(CONFIGS)],
      },
      {
        name: 'configuration page',
        page: page(`/console/configurations/${COMPONENT}/${config}`),
        // what the page shows: the configuration, its versions, the newest against the one before
        // (the diff), and its last job
        json: [
          api(`${CONFIGS}/${config}`),
          api(`${CONFIGS}/${config}/versions?limit=100`),
          api(`${CONFIGS}/${config}/versions/${shape.versionsPerConfiguration}`),
          api(`${CONFIGS}/${config}/versions/${shape.versionsPerConfiguration - 1}`),
          api(`/search/jobs?componentId=${COMPONENT}&configId=${config}&limit=1`),
        ],
      },
    ];
    const pages: PageFigure[] = [];
    for (const c of comparisons) {
      const probe = await fetch(`${served.url}${c.page.path}`, { headers: c.page.headers, redirect: 'manual' });
      await probe.arrayBuffer();
      if (probe.status === 404) {
        pages.push({ name: c.name, page: c.page.path, built: false });
        continue;
      }
      if (probe.status !== 200) throw new Error(`${c.page.path}: ${probe.status}`);
      const [p, j] = await measureGroups(served, [[c.page], c.json], shape.samples);
      for (const [what, m] of [
        [c.page.path, p],
        [c.json.map((r) => r.path).join(' + '), j],
      ] as const) {
        if (Object.keys(m.statuses).some((s) => s !== '200'))
          throw new Error(`${what}: statuses ${JSON.stringify(m.statuses)}`);
      }
      const ratio = Math.round((p.timing.serverP95Ms / j.timing.serverP95Ms) * 100) / 100;
      pages.push({
        name: c.name,
        page: c.page.path,
        built: true,
        console: p.timing,
        json: { ...j.timing, calls: c.json.map((r) => r.path) },
        ratio,
        withinTarget: p.timing.serverP95Ms <= PAGE_P95_TARGET_MS && ratio <= PAGE_RATIO_TARGET,
        bytes: p.bytes,
      });
    }

    // the live log with nothing new: the marker of a poll that answered lines, then polls with it
    const first = await session.get(`/console/jobs/${id}/log?after=${id}:0`);
    const marker = /marker=([^"&]*)/.exec(first.html)?.[1];
    if (marker === undefined) throw new Error('no marker in a log fragment');
    const pollPath = `/console/jobs/${id}/log?after=${id}:${shape.logLines}&marker=${marker}`;
    // PostgreSQL's statistics of an idle connection are flushed within 10 s: read them after each part
    const flushed = async () => {
      await sleep(11_000);
      return eventsScans(postgres!.url, postgres!.schema);
    };
    const scansStart = postgres ? await flushed() : 0;
    const [poll, health] = await measureGroups(served, [[page(pollPath)], [page('/health')]], shape.samples);
    let scans: number | undefined;
    if (postgres) {
      const scansAfter = await flushed();
      scans = scansAfter - scansStart;
      // the control: 10 fragments that do read the events must be counted
      for (let i = 0; i < 10; i++) await session.get(`/console/jobs/${id}/log?after=${id}:${shape.logLines - 10}`);
      if ((await flushed()) - scansAfter < 10) throw new Error('queue_job_events scans are not counted');
    }
    return {
      store: storeName,
      shape,
      fillMs: filled.fillMs,
      bigLogJobId: id,
      pages,
      logPoll: {
        statuses: poll.statuses,
        poll: poll.timing,
        health: health.timing,
        ...(scans === undefined ? {} : { eventsScans: scans }),
      },
    };
  } finally {
    await stop(served.child);
  }
}

export async function sqliteConsole(shape: ConsoleShape): Promise<ConsoleFigure> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-bench-console-'));
  try {
    return await measureServe('SQLite', path.join(dir, 'store.sqlite'), shape);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function postgresConsole(postgresUrl: string, shape: ConsoleShape): Promise<ConsoleFigure> {
  const schema = `gex_bench_console_${randomBytes(4).toString('hex')}`;
  await withPostgresClient(postgresUrl, (c) => c.query(`CREATE SCHEMA ${schema}`));
  try {
    return await measureServe('PostgreSQL', inSchema(postgresUrl, schema), shape, { url: postgresUrl, schema });
  } finally {
    await withPostgresClient(postgresUrl, (c) =>
      c.query(`DROP SCHEMA ${schema} CASCADE; DROP SCHEMA IF EXISTS ${schema}_pgboss CASCADE`),
    );
  }
}

/** The figure's lines, with their verdicts. */
export function describeConsole(f: ConsoleFigure): string[] {
  const verdict = (ok: boolean) => (ok ? 'target met' : 'TARGET MISSED');
  const name = f.store.padEnd(10);
  const lines = f.pages.map((p) => {
    if (!p.built) return `${name} ${p.name}: not built (404), skipped`;
    const c = p.console!;
    const j = p.json!;
    return (
      `${name} ${p.name.padEnd(34)} page p50 ${c.serverP50Ms} / p95 ${c.serverP95Ms} ms (client ${c.clientP50Ms} / ${c.clientP95Ms}) | ` +
      `JSON ${j.calls.length > 1 ? `${j.calls.length} calls ` : ''}p50 ${j.serverP50Ms} / p95 ${j.serverP95Ms} ms (client ${j.clientP50Ms} / ${j.clientP95Ms}) | ` +
      `ratio ${p.ratio!.toFixed(2)} (${verdict(p.withinTarget!)}: p95 <= ${PAGE_P95_TARGET_MS} ms and <= ${PAGE_RATIO_TARGET}×)`
    );
  });
  const { poll, health, statuses, eventsScans } = f.logPoll;
  lines.push(
    `${name} live log, nothing new: poll p50 ${poll.serverP50Ms} / p95 ${poll.serverP95Ms} ms (client ${poll.clientP50Ms} / ${poll.clientP95Ms}), ` +
      `statuses ${JSON.stringify(statuses)} | /health p50 ${health.serverP50Ms} / p95 ${health.serverP95Ms} ms` +
      (eventsScans === undefined
        ? ''
        : ` | queue_job_events scans during ${f.shape.samples + 10} polls: ${eventsScans}`),
  );
  return lines;
}
