/**
 * `npm run bench`: every performance figure of gex, each measured side by side with its yardstick
 * in the same run (absolute times on a shared machine are noise, ratios are not). Prints to the
 * terminal and writes bench/results.json.
 *
 * GEX_BENCH_QUICK=1 runs smaller sizes (a smoke test of the benchmarks, not figures to quote).
 * GEX_BENCH_ONLY=extraction runs sections 1–2 only (extraction against the floors, peak memory)
 * and writes bench/results-extraction.json instead; GEX_BENCH_ONLY=queue the queue jobs' section
 * (bench/results-queue.json); GEX_BENCH_ONLY=files tables loaded through gex serve against the embedded
 * load (bench/results-files.json); GEX_BENCH_ONLY=object-store File Storage in the local Swift's bucket:
 * a table loaded through gex serve on PostgreSQL with --file-storage (and with database chunks)
 * against the embedded load, the server's peak RSS with a ~100 MB and a ~1 GB file, and gex's upload
 * and download throughput against the AWS SDK's on the same bucket (bench/results-object-store.json);
 * GEX_BENCH_ONLY=schedules the schedule ticker of an idle server (bench/results-schedules.json); GEX_BENCH_ONLY=runtimes the same build on this Node and on
 * GEX_BENCH_NODE (CI: Node 24 LTS) side by side (bench/results-runtimes.json); GEX_BENCH_ONLY=flows a flow
 * of 3 phases × 10 tasks on 4 workers against a script that POSTs the same jobs phase by phase, and
 * a phase's end → the next phase's start, SQLite and PostgreSQL (bench/results-flows.json);
 * GEX_BENCH_ONLY=console the console's pages on a big history against the JSON calls returning the
 * same data, SQLite and PostgreSQL (bench/results-console.json); GEX_BENCH_ONLY=notifications a job end's
 * delivery latency to a webhook, job ends at the store with 3 subscriptions each against none (the
 * bookkeeping's worst case) and the drain of their events, and real queue jobs with 3 subscriptions
 * each against none, SQLite and PostgreSQL (bench/results-notifications.json).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { childrenRateLimited, childrenSpeedups } from './children-bench.js';
import { compareWithFloor, type FloorComparison } from './extraction-bench.js';
import { queueFigures } from './queue-bench.js';
import {
  describeConsole,
  postgresConsole,
  sqliteConsole,
  type ConsoleFigure,
  type ConsoleShape,
} from './console-bench.js';
import { describeFlows, postgresFlows, sqliteFlows, type FlowsFigure, type FlowsShape } from './flows-bench.js';
import {
  describeNotifications,
  notificationsFigure,
  type NotificationsFigure,
  type NotificationsShape,
} from './notifications-bench.js';
import { DEFAULT_CONCURRENCY } from '../src/jobs/notifications/notification-sender.js';
import {
  describeRealJobs,
  postgresRealJobs,
  sqliteRealJobs,
  type RealJobsFigure,
  type RealJobsShape,
} from './notifications-jobs-bench.js';
import { describeScheduleTicker, scheduleTickerFigure } from './schedules-bench.js';
import { repoRoot } from './measure.js';
import { rowHistoryFigure, type RowHistoryFigure } from './row-history-bench.js';
import { otherNode, runtimeFigures } from './runtime-bench.js';
import { parallelSpeedups } from './parallel-bench.js';
import { rateLimitedRun } from './rate-limit-bench.js';
import { runWithLoadVsNoLoad } from './run-load-bench.js';
import { describeComparison, tableLoadComparison, type TableLoadComparison } from './table-load-bench.js';
import { describeFilesComparison, filesLoadComparison, type FilesLoadComparison } from './files-bench.js';
import { describeObjectStore, objectStoreFigures, type ObjectStoreFigures } from './object-store-bench.js';
import {
  concurrentUpdateRate,
  historyLatency,
  rowsDetailLatency,
  serveThroughput,
  storeUpdateLatency,
  type ConcurrentUpdateRate,
} from './store-bench.js';
import { POSTGRES_EXAMPLE, postgresBackendAt, sqliteBackend } from '../test/support/store.js';

const quick = process.env.GEX_BENCH_QUICK === '1';
const only = process.env.GEX_BENCH_ONLY;
const GROUPS = [
  'extraction',
  'queue',
  'files',
  'object-store',
  'schedules',
  'runtimes',
  'flows',
  'console',
  'notifications',
];
if (only !== undefined && !GROUPS.includes(only))
  throw new Error(`GEX_BENCH_ONLY=${only}: the section groups that run alone are ${GROUPS.join(', ')}`);
const results: Record<string, unknown> = { date: new Date().toISOString(), quick };

/**
 * The peak RSS gex must stay under in every extraction: issue 24 keeps the 86–94 MB issue 16's
 * work reached (its 75 MB was missed; Generic Extractor peaks at 31 MB).
 */
const RSS_TARGET_MB = 95;
/** flat records, gex's wall time over the floor's (issue 24: 1.01–1.07 before parallel child jobs) */
const FLAT_RATIO_TARGET = 1.1;

function section(title: string): void {
  console.log(`\n== ${title}`);
}

/** queue jobs (issue 25): dispatch latency, throughput against direct runs, an idle worker's memory */
async function queueSection(): Promise<void> {
  section('queue jobs: dispatch to an idle worker; PostgreSQL throughput with gex workers; worker memory');
  results.queue = await queueFigures(process.env.GEX_TEST_POSTGRES?.trim() || undefined, quick);
}

/** tables loaded through gex serve (issue 26): upload + import job against the embedded load of the same file */
async function filesSection(): Promise<void> {
  section('tables through gex serve: prepare + upload + tables-async + polls vs ProjectTables.load, 10 columns');
  const figures: FilesLoadComparison[] = [];
  const postgres = process.env.GEX_TEST_POSTGRES?.trim() || POSTGRES_EXAMPLE;
  for (const backend of [sqliteBackend, postgresBackendAt(postgres)]) {
    try {
      const r = await filesLoadComparison(backend, quick ? 100_000 : 1_000_000);
      figures.push(r);
      console.log(describeFilesComparison(r));
    } catch (error) {
      if (backend.name === 'SQLite') throw error;
      console.log(`${backend.name}: skipped (${(error as Error).message.split('\n')[0]})`);
    }
  }
  results.files = figures;
}

/**
 * File Storage in an object store (issue 38): the local Swift with s3api the tests use, PostgreSQL
 * at GEX_TEST_POSTGRES; skipped loudly when either is missing
 */
async function objectStoreSection(): Promise<void> {
  const shape = quick
    ? { loadRows: 100_000, largeRows: 500_000, repetitions: [2, 1] as [number, number] }
    : { loadRows: 1_000_000, largeRows: 10_000_000, repetitions: [3, 1] as [number, number] };
  section(
    `object store (Swift s3api): a table of ${shape.loadRows.toLocaleString('en')} rows through gex serve on PostgreSQL with --file-storage vs the embedded load (target <= 1.5×); ` +
      `the server's peak RSS with a ${quick ? '~10' : '~100'} MB and a ${quick ? '~50' : '~1,000'} MB file (flat); ` +
      "upload and download through gex's client vs the AWS SDK on the same bucket (target >= 0.9×)",
  );
  const backend = postgresBackendAt(process.env.GEX_TEST_POSTGRES?.trim() || POSTGRES_EXAMPLE);
  let unusable: string | undefined;
  try {
    await (await backend.fresh()).dispose();
  } catch (error) {
    // the message of a refused connection, not the URL (it may hold a password)
    unusable = `PostgreSQL cannot be used (${(error as Error).message.split('\n')[0]}; set GEX_TEST_POSTGRES to a reachable database)`;
  }
  results.objectStore = unusable === undefined ? await objectStoreFigures(backend, shape) : { skipped: unusable };
  for (const line of describeObjectStore(results.objectStore as ObjectStoreFigures)) console.log(line);
}

/** issue 33: what schedules cost an idle server, against the same server with none */
const SCHEDULE_IDLE_TARGET = 5;
async function schedulesSection(): Promise<void> {
  // GEX_BENCH_SCHEDULES=N another number of schedules (a ticker that saturates a core takes long at 10,000)
  const count = Number(process.env.GEX_BENCH_SCHEDULES) || (quick ? 1000 : 10_000);
  section(`schedule ticker: an idle gex serve (SQLite) with ${count.toLocaleString('en')} schedules vs none`);
  const figure = await scheduleTickerFigure(count, quick ? 10 : 30);
  for (const line of describeScheduleTicker(figure, SCHEDULE_IDLE_TARGET)) console.log(line);
  results.schedules = figure;
}

function verdict(ok: boolean): string {
  return ok ? 'target met' : 'TARGET MISSED';
}

/** Node 20 and Node 24 (issue 34): the same build's start-up and flat extraction on each, side by side */
async function runtimesSection(): Promise<void> {
  const other = otherNode();
  const nodes = [process.execPath, ...(other ? [other] : [])];
  section('runtimes: the same build on each Node — start-up (a one-page gex run) and flat extraction vs the floor');
  if (!other)
    console.log(
      '!!! only this Node was measured: set GEX_BENCH_NODE to another node binary (Node 24 LTS: "$(.ci/node24)/node")',
    );
  const figures = await runtimeFigures(nodes, quick);
  for (const f of figures) {
    const start =
      f.startMs === undefined
        ? `start-up ${f.startNoCacheMs} ms (no compile cache in this Node)`
        : `start-up ${f.startMs} ms with the compile cache, ${f.startNoCacheMs} ms without`;
    const { flat } = f;
    console.log(
      `Node ${f.version.padEnd(8)} ${start} | flat P=1000 gex ${flat.gex.wallMs} ms, floor ${flat.floor.wallMs} ms: ratio ${flat.wallRatio.toFixed(2)}` +
        ` (${verdict(flat.wallRatio <= FLAT_RATIO_TARGET)}: <= ${FLAT_RATIO_TARGET}), peak ${flat.gex.peakRssMb} MB (${verdict(flat.gex.peakRssMb <= RSS_TARGET_MB)}: <= ${RSS_TARGET_MB}; floor ${flat.floor.peakRssMb} MB)`,
    );
  }
  results.runtimes = figures;
}

/**
 * flows (issue 35): a flow's time against a script doing its phases through POST /jobs, and the
 * latency from a phase's last task ending to the next phase's first task running
 */
async function flowsSection(): Promise<void> {
  const shape: FlowsShape = quick
    ? { phases: 3, tasksPerPhase: 4, apiDelayMs: 200, repetitions: 1 }
    : { phases: 3, tasksPerPhase: 10, apiDelayMs: 200, repetitions: 3 };
  section(
    `flows: ${shape.phases} phases × ${shape.tasksPerPhase} one-request tasks on 4 workers vs a script POSTing them phase by phase (polls every 50 ms); ${shape.repetitions} runs each, alternating`,
  );
  const figures: FlowsFigure[] = [];
  const sqlite = await sqliteFlows(shape);
  figures.push(sqlite);
  for (const line of describeFlows(sqlite)) console.log(line);
  const postgres = process.env.GEX_TEST_POSTGRES?.trim() || POSTGRES_EXAMPLE;
  try {
    const figure = await postgresFlows(postgres, shape);
    figures.push(figure);
    for (const line of describeFlows(figure)) console.log(line);
  } catch (error) {
    console.log(
      `PostgreSQL: skipped (${(error as Error).message.split('\n')[0]}; set GEX_TEST_POSTGRES to a reachable database)`,
    );
  }
  results.flows = figures;
}

/**
 * the console (issue 36): each page's server time (the request log's durationMs) on a big history
 * against the JSON API call(s) returning the same data, and the live log's poll while nothing is new
 */
async function consoleSection(): Promise<void> {
  const shape: ConsoleShape = quick
    ? { jobs: 1000, configurations: 100, versionsPerConfiguration: 10, logLines: 10_000, samples: 30 }
    : { jobs: 10_000, configurations: 1000, versionsPerConfiguration: 10, logLines: 100_000, samples: 100 };
  section(
    `console: ${shape.jobs.toLocaleString('en')} jobs, ${shape.configurations.toLocaleString('en')} configurations × ${shape.versionsPerConfiguration} versions, ` +
      `a ${shape.logLines.toLocaleString('en')}-line log; server time (request log) of ${shape.samples} requests per page vs its JSON calls, gex serve --workers 0`,
  );
  const figures: ConsoleFigure[] = [];
  const sqlite = await sqliteConsole(shape);
  figures.push(sqlite);
  for (const line of describeConsole(sqlite)) console.log(line);
  const postgres = process.env.GEX_TEST_POSTGRES?.trim() || POSTGRES_EXAMPLE;
  try {
    const figure = await postgresConsole(postgres, shape);
    figures.push(figure);
    for (const line of describeConsole(figure)) console.log(line);
  } catch (error) {
    if (!/ECONNREFUSED|ENOTFOUND|password|does not exist|timeout/i.test((error as Error).message)) throw error;
    console.log(
      `PostgreSQL: skipped (${(error as Error).message.split('\n')[0]}; set GEX_TEST_POSTGRES to a reachable database)`,
    );
  }
  results.console = figures;
}

/**
 * notifications (issue 37): a job end → its webhook POST (the sender told by its own repository, or
 * seeing another connection's end by its poll); job ends at the store with subscriptions against none;
 * the drain; real queue jobs with subscriptions against none (the target's figure)
 */
async function notificationsSection(): Promise<void> {
  const shape: NotificationsShape = quick
    ? {
        latencyJobs: 10,
        jobEnds: 500,
        subscriptions: 3,
        answerDelayMs: 50,
        batches: 2,
        enders: 4,
        concurrency: DEFAULT_CONCURRENCY,
        defaultBacklog: 240,
      }
    : {
        latencyJobs: 20,
        jobEnds: 10_000,
        subscriptions: 3,
        answerDelayMs: 50,
        batches: 5,
        enders: 4,
        concurrency: DEFAULT_CONCURRENCY,
        defaultBacklog: 960,
      };
  // PostgreSQL's job ends are ~4× slower here (~40/s with subscriptions): the brief's 10,000 would take 6 minutes
  // alone; GEX_BENCH_NOTIFICATION_JOBS=N sets both stores' number
  const postgresJobEnds = Number(process.env.GEX_BENCH_NOTIFICATION_JOBS) || (quick ? shape.jobEnds : 2000);
  if (process.env.GEX_BENCH_NOTIFICATION_JOBS) shape.jobEnds = postgresJobEnds;
  // GEX_BENCH_NOTIFICATION_CONCURRENCY=N the sender's concurrency in the job-end runs (default: the sender's own, 32)
  shape.concurrency = Number(process.env.GEX_BENCH_NOTIFICATION_CONCURRENCY) || shape.concurrency;
  // real queue jobs (each a gex run process) through gex serve / gex worker, with the subscriptions made
  // through the Notification API: GEX_BENCH_NOTIFICATION_REAL_JOBS=N jobs each side (150: ~2 minutes for
  // both stores here, beside the store level's ~5; 300 gave the same ratios)
  const real: RealJobsShape = {
    jobs: Number(process.env.GEX_BENCH_NOTIFICATION_REAL_JOBS) || (quick ? 40 : 150),
    batches: quick ? 2 : 3,
    subscriptions: 3,
    answerDelayMs: 50,
    configurations: 20,
  };
  section(
    `notifications: delivery latency to a local webhook (median of ${shape.latencyJobs} job ends, target <= 1000 ms); ` +
      `store level (the bookkeeping's worst case, no target): ${shape.jobEnds.toLocaleString('en')} job ends (PostgreSQL ${postgresJobEnds.toLocaleString('en')}) × ${shape.subscriptions} webhook subscriptions (answers after ${shape.answerDelayMs} ms) vs none, ` +
      `${shape.batches} batches each, alternating; the drain of their events (sender concurrency ${shape.concurrency}${shape.concurrency === DEFAULT_CONCURRENCY ? ', the default' : `, not the default ${DEFAULT_CONCURRENCY}`}); ` +
      `real jobs: ${real.jobs} gex jobs each side × ${real.subscriptions} webhook subscriptions vs none, ${real.batches} runs each, alternating (target <= 1.1×), every event exactly once`,
  );
  const figures: NotificationsFigure[] = [];
  const postgres = process.env.GEX_TEST_POSTGRES?.trim() || POSTGRES_EXAMPLE;
  for (const backend of [sqliteBackend, postgresBackendAt(postgres)]) {
    try {
      const figure = await notificationsFigure(
        backend,
        backend.name === 'SQLite' ? shape : { ...shape, jobEnds: postgresJobEnds },
      );
      figures.push(figure);
      for (const line of describeNotifications(figure)) console.log(line);
    } catch (error) {
      if (
        backend.name === 'SQLite' ||
        !/ECONNREFUSED|ENOTFOUND|password|does not exist|timeout/i.test((error as Error).message)
      )
        throw error;
      console.log(
        `PostgreSQL: skipped (${(error as Error).message.split('\n')[0]}; set GEX_TEST_POSTGRES to a reachable database)`,
      );
    }
  }
  const realFigures: RealJobsFigure[] = [];
  const sqliteReal = await sqliteRealJobs(real);
  realFigures.push(sqliteReal);
  console.log(describeRealJobs(sqliteReal));
  try {
    const figure = await postgresRealJobs(postgres, real);
    realFigures.push(figure);
    console.log(describeRealJobs(figure));
  } catch (error) {
    if (!/ECONNREFUSED|ENOTFOUND|password|does not exist|timeout/i.test((error as Error).message)) throw error;
    console.log(
      `PostgreSQL real jobs: skipped (${(error as Error).message.split('\n')[0]}; set GEX_TEST_POSTGRES to a reachable database)`,
    );
  }
  results.notifications = { storeLevel: figures, realJobs: realFigures };
}

/** the section groups that run alone (GEX_BENCH_ONLY), each writing bench/results-<name>.json */
const ALONE: Record<string, () => Promise<void>> = {
  schedules: schedulesSection,
  files: filesSection,
  'object-store': objectStoreSection,
  queue: queueSection,
  runtimes: runtimesSection,
  flows: flowsSection,
  console: consoleSection,
  notifications: notificationsSection,
};
if (only !== undefined && only !== 'extraction') {
  await ALONE[only]();
  const file = path.join(repoRoot, 'bench', `results-${only}.json`);
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nresults written to ${path.relative(process.cwd(), file)}`);
  process.exit(0);
}

// 1. extraction against the floors: [pages, repetitions]. The ratios are medians of alternating runs;
// a shared machine's noise moves a single pair by ±10%, so the flat sizes are repeated more (the
// targets are on them); nested is there to compare and repeats less
section('extraction vs the floors (got + JSON.parse + csv-stringify, sequential), R = 100 records per page');
const sizesFor = (shape: 'flat' | 'nested'): Array<[number, number]> => {
  if (quick)
    return [
      [100, 3],
      [1000, 1],
    ];
  return shape === 'flat'
    ? [
        [100, 9],
        [1000, 7],
        [10_000, 3],
      ]
    : [
        [1000, 3],
        [10_000, 1],
      ];
};
const extraction: FloorComparison[] = [];
for (const shape of ['flat', 'nested'] as const) {
  for (const [pages, repetitions] of sizesFor(shape)) {
    const r = await compareWithFloor(pages, 100, shape, repetitions);
    extraction.push(r);
    console.log(
      `${shape.padEnd(6)} P=${String(pages).padStart(6)}  gex ${String(r.gex.wallMs).padStart(6)} ms ${String(r.gex.recordsPerSecond).padStart(7)} rec/s ${String(r.gex.peakRssMb).padStart(6)} MB` +
        ` | floor ${String(r.floor.wallMs).padStart(6)} ms ${String(r.floor.recordsPerSecond).padStart(7)} rec/s ${String(r.floor.peakRssMb).padStart(6)} MB` +
        ` | wall ratio ${r.wallRatio.toFixed(2)}${shape === 'flat' ? ` (${verdict(r.wallRatio <= FLAT_RATIO_TARGET)}: <= ${FLAT_RATIO_TARGET})` : ' (one-table floor: different work, no target)'}, RSS ratio ${r.rssRatio.toFixed(2)}`,
    );
    if (r.tablesFloor) {
      const target = pages === 1000 ? ` (${verdict(r.tablesWallRatio! <= 1.3)}: <= 1.3)` : '';
      console.log(
        `${''.padEnd(6)} ${''.padStart(8)}  three-table floor ${String(r.tablesFloor.wallMs).padStart(6)} ms ${String(r.tablesFloor.recordsPerSecond).padStart(7)} rec/s ${String(r.tablesFloor.peakRssMb).padStart(6)} MB` +
          ` | wall ratio ${r.tablesWallRatio!.toFixed(2)}${target} | tables ${r.identicalTables ? 'byte-identical to gex' : 'DIFFER FROM GEX'}`,
      );
    }
  }
}
results.extraction = extraction;

// 2. peak memory at each size against the target, and how it grows with the number of pages
section(
  `peak memory (target: <= ${RSS_TARGET_MB} MB at every size, <= 1.15× from the smaller to the largest; Generic Extractor: 31 MB)`,
);
const [smaller, largest] = quick ? [100, 1000] : [1000, 10_000];
const memory = (['flat', 'nested'] as const).map((shape) => {
  const big = extraction.find((r) => r.shape === shape && r.pages === largest)!;
  const small = extraction.find((r) => r.shape === shape && r.pages === smaller)!;
  const growth = Math.round((big.gex.peakRssMb / small.gex.peakRssMb) * 100) / 100;
  const peaks = [small, big].map(
    (r) =>
      `P=${r.pages} ${r.gex.peakRssMb} MB (${verdict(r.gex.peakRssMb <= RSS_TARGET_MB)}; floor ${r.floor.peakRssMb} MB)`,
  );
  console.log(
    `${shape.padEnd(6)} ${peaks.join(', ')}; growth P=${smaller} → P=${largest}: ${growth.toFixed(2)} (${verdict(growth <= 1.15)}: <= 1.15)`,
  );
  return {
    shape,
    largest,
    smaller,
    growth,
    vsFloor: big.rssRatio,
    peakRssMb: big.gex.peakRssMb,
    smallerPeakRssMb: small.gex.peakRssMb,
    withinTarget: small.gex.peakRssMb <= RSS_TARGET_MB && big.gex.peakRssMb <= RSS_TARGET_MB,
  };
});
results.memory = memory;

if (only === 'extraction') {
  const file = path.join(repoRoot, 'bench', 'results-extraction.json');
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nresults written to ${path.relative(process.cwd(), file)}`);
  process.exit(0);
}

// 3. parallel page fetching
section('parallel page fetching: 200 pages, 50 ms latency per request');
const parallel = await parallelSpeedups(quick ? 40 : 200, 50);
for (const r of parallel) {
  const target = r.concurrency === 4 ? 3.5 : r.concurrency === 8 ? 6 : undefined;
  console.log(
    `concurrency ${r.concurrency}: process ${String(r.wallMs).padStart(6)} ms, speedup ${r.speedup.toFixed(2)}× | extraction ${String(r.extractionMs).padStart(6)} ms,` +
      ` speedup ${r.extractionSpeedup.toFixed(2)}×${target ? ` (${verdict(r.extractionSpeedup >= target)}: >= ${target})` : ''}` +
      ` | output ${r.identicalOutput ? 'identical to sequential' : 'DIFFERS FROM SEQUENTIAL'}`,
  );
}
results.parallel = parallel;

// 3b. child jobs fetched ahead (issue 16): one detail request per parent record
section('parallel child jobs: 500 parent records (5 pages) × 1 detail request each, 50 ms latency per request');
const children = await childrenSpeedups(quick ? 100 : 500, 50, [4, 8]);
for (const r of children) {
  const target = r.concurrency === 8 ? 6 : undefined;
  console.log(
    `child concurrency ${r.concurrency}: extraction ${String(r.extractionMs).padStart(6)} ms, speedup ${r.speedup.toFixed(2)}×` +
      `${target ? ` (${verdict(r.speedup >= target)}: >= ${target})` : ''} | tables ${r.identicalOutput ? 'identical to sequential' : 'DIFFER FROM SEQUENTIAL'}`,
  );
}
results.children = children;
const childrenLimited = await childrenRateLimited(100, 20, 8, 50);
console.log(
  `rate-limited API (20 requests/s, 429 + Retry-After beyond), child concurrency 8: settled at ${childrenLimited.settledPerSecond} requests/s = ` +
    `${childrenLimited.ratio.toFixed(2)} × the allowed rate, ${childrenLimited.throttledResponses} throttled responses retried, ${childrenLimited.wallMs} ms, ` +
    `tables ${childrenLimited.identicalOutput ? 'identical to an unlimited sequential run' : 'DIFFER'}`,
);
results.childrenRateLimited = childrenLimited;

// 4. rate-limit aware concurrency
section('rate limit: server admits 20 requests/s (429 + Retry-After beyond), gex asks for concurrency 8');
const rateLimit = await rateLimitedRun(20, 8, quick ? 60 : 200, 50);
console.log(
  `settled at ${rateLimit.settledPerSecond} pages/s = ${rateLimit.ratio.toFixed(2)} × the allowed rate, ${rateLimit.throttledResponses} throttled responses retried, ` +
    `${rateLimit.pages} pages in ${rateLimit.wallMs} ms, run succeeded`,
);
results.rateLimit = rateLimit;

// 5. store
section('store');
const history = await historyLatency(10 * 1024, quick ? 1000 : 10_000);
console.log(
  `update of a 10 KB configuration: 1 version of history ${history.shortMedianMs} ms, ${history.longHistory} versions ${history.longMedianMs} ms` +
    ` (median) = ${history.ratio.toFixed(2)} (${verdict(history.ratio <= 1.5)}: <= 1.5)`,
);
console.log(
  `list versions of that configuration: newest 100 ${history.listNewestMs} ms, oldest 100 ${history.listOldestMs} ms (median)`,
);
const rows = await rowsDetailLatency(1000);
console.log(
  `detail of a configuration with ${rows.rows} rows: embedded ${rows.embeddedMedianMs} ms, over HTTP ${rows.httpMedianMs} ms` +
    ` (read cache off: ${rows.httpUncachedMedianMs} ms) (median)`,
);
const updates = [];
for (const via of ['embedded', 'http'] as const) {
  for (const versions of quick ? [1, 100] : [1, 1000]) {
    const r = await storeUpdateLatency(via, 100 * 1024, versions);
    updates.push(r);
    console.log(
      `update of a 100 KB configuration (${via.padEnd(8)}) with ${String(versions).padStart(4)} versions of history: median ${r.medianUpdateMs} ms`,
    );
  }
}
const serve = await serveThroughput(quick ? 2 : 5);
console.log(
  `gex serve GET configuration detail: ${serve.detailRequestsPerSecond} req/s vs Fastify trivial JSON route ${serve.trivialRequestsPerSecond} req/s` +
    ` = ${serve.ratio.toFixed(2)} (${verdict(serve.ratio >= 0.3)}: >= 0.3); with the read cache off ${serve.uncachedRequestsPerSecond} req/s = ${serve.uncachedRatio.toFixed(2)}`,
);
// a configuration with many rows (issue 23): its history grows linearly, an import is one version
const rowHistory: RowHistoryFigure[] = [];
for (const rows of quick ? [1000, 2000] : [1000, 2000, 10_000]) {
  const r = await rowHistoryFigure(rows, { update: rows === 2000 });
  rowHistory.push(r);
  const update = r.rowUpdateBytes === undefined ? '' : `; one row update then adds ${r.rowUpdateBytes} bytes`;
  console.log(
    r.finished
      ? `gex configs import of ${String(rows).padStart(6)} rows: ${r.importMs} ms, ${r.versions} version(s), store ${(r.storeBytes! / 1e6).toFixed(1)} MB ` +
          `(data ${(r.storedBytes! / 1e6).toFixed(1)} MB, write-ahead log after the import ${(r.walBytes! / 1e6).toFixed(1)} MB)${update}`
      : `gex configs import of ${rows} rows: did not finish in 4 minutes`,
  );
}
results.store = { history, rows, updates, serve, rowHistory };

// 6. concurrent updates of one configuration (issue 6): SQLite in one process, PostgreSQL in one and three
section('concurrent updates of one configuration through gex serve');
const concurrent: ConcurrentUpdateRate[] = [];
const postgresUrl = process.env.GEX_TEST_POSTGRES || POSTGRES_EXAMPLE;
for (const [backend, processes] of [
  [sqliteBackend, 1],
  [postgresBackendAt(postgresUrl), 1],
  [postgresBackendAt(postgresUrl), 3],
] as const) {
  try {
    const r = await concurrentUpdateRate(backend, processes);
    concurrent.push(r);
    console.log(
      `${r.updates} at once, ${r.store.padEnd(10)} ${processes} gex serve: ${String(r.updatesPerSecond).padStart(5)} updates/s (${r.wallMs} ms)`,
    );
  } catch (error) {
    if (backend.name === 'SQLite') throw error;
    console.log(
      `${backend.name}: skipped (${(error as Error).message.split('\n')[0]}; set GEX_TEST_POSTGRES to a reachable database)`,
    );
  }
}
results.concurrent = concurrent;

// 7. output mapping (issue 15): a run loading its tables into the SQLite store vs --no-load
section('gex run --config-id on the SQLite store: loading tables vs --no-load, R = 100 records per page');
const runLoad = await runWithLoadVsNoLoad(quick ? 100 : 1000, 100, quick ? 2 : 5);
console.log(
  `P=${runLoad.pages}: loading ${runLoad.load.medianMs} ms (${runLoad.load.peakRssMb} MB) vs --no-load ${runLoad.noLoad.medianMs} ms (${runLoad.noLoad.peakRssMb} MB)` +
    ` (medians of ${runLoad.repetitions}, alternating) = ${runLoad.ratio.toFixed(2)} (${verdict(runLoad.ratio <= 1.3)}: <= 1.3);` +
    ` runs: loading ${runLoad.loadMs.join(', ')} ms, --no-load ${runLoad.noLoadMs.join(', ')} ms`,
);
results.runLoad = runLoad;

// 8. Storage table loads (issue 15): each database's own bulk path is the floor
section('Storage table loads: 10 columns, each load in a process of its own');
const tableRows = quick ? [25_000, 100_000] : [250_000, 1_000_000];
const tableLoads: TableLoadComparison[] = [];
for (const backend of [sqliteBackend, postgresBackendAt(postgresUrl)]) {
  try {
    for (const rows of tableRows) {
      const r = await tableLoadComparison(backend, rows, postgresUrl);
      tableLoads.push(r);
      for (const line of describeComparison(r)) console.log(line);
    }
    const [small, big] = tableRows.map((rows) => tableLoads.find((r) => r.store === backend.name && r.rows === rows)!);
    for (const kind of ['full', 'incremental'] as const) {
      const growth = Math.round((big[kind].peakRssMb / small[kind].peakRssMb) * 100) / 100;
      console.log(
        `${backend.name} ${kind} load peak RSS, ${big.rows} / ${small.rows} rows: ${big[kind].peakRssMb} / ${small[kind].peakRssMb} MB = ${growth.toFixed(2)} (${verdict(growth <= 1.15)}: <= 1.15)`,
      );
    }
  } catch (error) {
    if (backend.name === 'SQLite') throw error;
    console.log(
      `${backend.name}: skipped (${(error as Error).message.split('\n')[0]}; set GEX_TEST_POSTGRES to a reachable database)`,
    );
  }
}
results.tableLoads = tableLoads;

await filesSection();

await objectStoreSection();

await queueSection();

await schedulesSection();

await runtimesSection();

await flowsSection();

await consoleSection();

await notificationsSection();

const file = path.join(repoRoot, 'bench', 'results.json');
await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\nresults written to ${path.relative(process.cwd(), file)}`);
