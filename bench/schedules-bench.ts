import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { GENERIC_EXTRACTOR_ID } from '../src/cli/builtin-components.js';
import { activateSchedule } from '../src/jobs/schedules/schedule-activation.js';
import { ScheduleRepository } from '../src/jobs/schedules/schedule-repository.js';
import { SCHEDULER_COMPONENT_ID } from '../src/jobs/schedules/scheduler-component.js';
import { fromPlain } from '../src/json/index.js';
import { startServe } from '../test/support/cli.js';
import { openEmbeddedStore } from '../test/support/open-store.js';
import { call } from '../test/support/queue.js';

const KEY = { GEX_MASTER_KEY: '68'.repeat(32) };
const SCHEDULER_CONFIGS = '/v2/storage/branch/default/components/keboola.scheduler/configs';
/** the time zones of the seeded schedules (the one first) */
const ZONES = ['Europe/Prague', 'America/New_York', 'UTC', 'Asia/Tokyo'];
/** a cron that never fires, stored as an older gex accepted it (the API refuses it now) */
const NEVER = '0 0 31 4,6,9,11 *';

export interface IdleServer {
  schedules: number;
  /** the server's CPU time over the idle window, in % of one core */
  cpuPercent: number;
  /** GET /health while idle, median of the samples taken in the window */
  healthMedianMs: number;
  /** creating one schedule through the APIs (POST its configuration + POST /schedules), median */
  createMedianMs: number;
  /** the server's resident memory after the idle window */
  rssMb: number;
  /** start → the ticker's "schedules loaded" line (when it says so), and the CPU it took */
  loadMs?: number;
  loadCpuSeconds?: number;
  /** GET /health while the ticker loads them (every 200 ms): median and slowest */
  loadHealthMedianMs?: number;
  loadHealthMaxMs?: number;
}

export interface ScheduleTickerFigure {
  windowSeconds: number;
  idle: IdleServer[];
  /** the schedules' own cost: CPU % with them minus CPU % of the same server with none */
  costPercent: number;
}

/** utime + stime of a process, in seconds (Linux /proc; clock ticks of 10 ms) */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 102.4) / 10;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(20_000)]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** The local hour 12 hours from now in `zone`: a daily tick there does not fall in a short window. */
function farHour(zone: string): number {
  const hour = Number(new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: 'numeric', hour12: false }).format());
  return (hour + 12) % 24;
}

/**
 * The i-th seeded schedule: weekday, daily, monthly and weekly crons in four zones, none due soon,
 * no two alike up to 14,400 (the seconds and minutes differ): every one is evaluated on its own.
 */
function cronOf(i: number): { cronTab: string; timezone: string } {
  const timezone = ZONES[i % ZONES.length];
  const hour = farHour(timezone);
  const at = `${i % 60} ${Math.floor(i / 60) % 60} ${hour}`;
  const shapes = [`${at} * * 1-5`, `${at} * * *`, `${at} 1 * *`, `${at} * * 0`];
  return { cronTab: shapes[Math.floor(i / 3600) % shapes.length], timezone };
}

/** Idle window: the server's CPU over `seconds`, and /health sampled every 500 ms meanwhile. */
async function idleWindow(pid: number, url: string, seconds: number): Promise<{ cpu: number; healthMs: number }> {
  const before = cpuSeconds(pid);
  const started = performance.now();
  const health: number[] = [];
  while (performance.now() - started < seconds * 1000) {
    const t = performance.now();
    await fetch(`${url}/health`).then((r) => r.arrayBuffer());
    health.push(performance.now() - t);
    await sleep(500);
  }
  const wall = (performance.now() - started) / 1000;
  return {
    cpu: Math.round(((cpuSeconds(pid) - before) / wall) * 1000) / 10,
    healthMs: Math.round(median(health) * 10) / 10,
  };
}

/** Creates `count` schedules of configuration `shop` through the server's APIs; the median time of one. */
async function createThroughApi(url: string, token: string, count: number, offset: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    await sleep(300); // the ticker has taken in the previous one
    const started = performance.now();
    const config = await call(url, token, 'POST', SCHEDULER_CONFIGS, {
      name: `created ${offset + i}`,
      configuration: {
        schedule: { ...cronOf(offset + i), state: 'enabled' },
        target: { componentId: GENERIC_EXTRACTOR_ID, configurationId: 'shop' },
      },
    });
    if (config.status !== 201) throw new Error(JSON.stringify(config.body));
    const activated = await call(url, token, 'POST', '/schedules', { configurationId: String(config.body.id) });
    if (activated.status !== 201) throw new Error(JSON.stringify(activated.body));
    times.push(performance.now() - started);
  }
  return Math.round(median(times) * 10) / 10;
}

/** Starts `gex serve` (one worker); resolves once it listens, with when it logged "schedules loaded" */
async function serve(store: string): Promise<{ child: ChildProcess; url: string; loaded: Promise<number> }> {
  const started = performance.now();
  const served = await startServe(['--store', store, '--workers', '1'], KEY);
  const loaded = new Promise<number>((resolve) => {
    const look = () => {
      if (/Schedules loaded/.test(served.output())) return resolve(performance.now() - started);
      setTimeout(look, 50).unref();
    };
    look();
  });
  return { child: served.child, url: served.url, loaded };
}

/**
 * The schedule ticker of an idle `gex serve` (issue 33): its CPU with no schedules (the yardstick),
 * then with `count` schedules seeded into the same SQLite store (weekday/daily/monthly/weekly crons
 * in four zones, none due in the window, and one stored cron that never fires), measured over
 * `windowSeconds`. Also /health and the time to create one schedule through the APIs, at both sizes.
 */
export async function scheduleTickerFigure(count: number, windowSeconds: number): Promise<ScheduleTickerFigure> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-bench-schedules-'));
  const store = path.join(dir, 'store.sqlite');
  const idle: IdleServer[] = [];
  try {
    let backend = await openEmbeddedStore(store, KEY);
    const { token, info } = await backend.createToken({ description: 'bench' });
    const session = backend.session(info);
    await session.createConfiguration(GENERIC_EXTRACTOR_ID, {
      name: 'Shop',
      configurationId: 'shop',
      configuration: fromPlain({ parameters: { api: { baseUrl: 'http://127.0.0.1:9/' }, config: { jobs: [] } } }),
    });
    await backend.close();

    // the yardstick: the same server, no schedules
    let served = await serve(store);
    await sleep(3000); // start-up settles
    const none = await idleWindow(served.child.pid!, served.url, windowSeconds);
    const rssNone = rssMb(served.child.pid!);
    const createNone = await createThroughApi(served.url, token, 20, 0);
    idle.push({
      schedules: 0,
      cpuPercent: none.cpu,
      healthMedianMs: none.healthMs,
      createMedianMs: createNone,
      rssMb: rssNone,
    });
    await stop(served.child);

    // seeded in this process while no server runs (what a store that grew over time holds)
    backend = await openEmbeddedStore(store, { ...KEY, GEX_SQLITE_SYNCHRONOUS: 'normal' });
    const seeding = backend.session(info);
    for (let i = 20; i < count; i++) {
      const config = await seeding.createConfiguration(SCHEDULER_COMPONENT_ID, {
        name: `seeded ${i}`,
        configuration: fromPlain({
          schedule: { ...cronOf(i), state: 'enabled' },
          target: { componentId: GENERIC_EXTRACTOR_ID, configurationId: 'shop' },
        }),
      });
      await activateSchedule(seeding, info, new ScheduleRepository(backend.db), config.id);
    }
    // one that never fires, as an older gex stored it
    const never = await backend.db.get<{ definition: string }>('SELECT definition FROM schedules ORDER BY id LIMIT 1');
    await backend.db.run('UPDATE schedules SET definition = ? WHERE id = (SELECT MAX(id) FROM schedules)', [
      JSON.stringify({ ...JSON.parse(never!.definition), cronTab: NEVER }),
    ]);
    await backend.close();

    served = await serve(store);
    const cpuAtStart = cpuSeconds(served.child.pid!);
    let loadMs: number | undefined;
    void Promise.race([served.loaded, sleep(180_000)]).then((ms) => (loadMs = ms ?? -1));
    const loadHealth: number[] = [];
    while (loadMs === undefined) {
      const t = performance.now();
      await fetch(`${served.url}/health`).then((r) => r.arrayBuffer());
      loadHealth.push(performance.now() - t);
      await sleep(200);
    }
    if (loadMs < 0) loadMs = undefined;
    const loadCpu = loadMs === undefined ? undefined : cpuSeconds(served.child.pid!) - cpuAtStart;
    await sleep(3000);
    const many = await idleWindow(served.child.pid!, served.url, windowSeconds);
    const rssMany = rssMb(served.child.pid!);
    const createMany = await createThroughApi(served.url, token, 20, count);
    idle.push({
      schedules: count,
      cpuPercent: many.cpu,
      healthMedianMs: many.healthMs,
      createMedianMs: createMany,
      rssMb: rssMany,
      loadMs: loadMs === undefined ? undefined : Math.round(loadMs),
      loadCpuSeconds: loadCpu === undefined ? undefined : Math.round(loadCpu * 100) / 100,
      loadHealthMedianMs: Math.round(median(loadHealth) * 10) / 10,
      loadHealthMaxMs: Math.round(Math.max(...loadHealth) * 10) / 10,
    });
    await stop(served.child);
    return { windowSeconds, idle, costPercent: Math.round((many.cpu - none.cpu) * 10) / 10 };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The figure as the bench prints it. */
export function describeScheduleTicker(figure: ScheduleTickerFigure, target: number): string[] {
  const [none, many] = figure.idle;
  const load =
    many.loadMs === undefined
      ? 'the ticker never said it had loaded them'
      : `loaded in ${many.loadMs} ms (${many.loadCpuSeconds} s of CPU; /health meanwhile median ${many.loadHealthMedianMs} ms, slowest ${many.loadHealthMaxMs} ms)`;
  return [
    `idle gex serve, ${figure.windowSeconds} s: 0 schedules ${none.cpuPercent}% of a core, ${many.schedules} schedules ${many.cpuPercent}%` +
      ` = ${figure.costPercent} points for the schedules (${figure.costPercent < target ? 'target met' : 'TARGET MISSED'}: < ${target})`,
    `  RSS ${none.rssMb} vs ${many.rssMb} MB; /health median ${none.healthMedianMs} ms vs ${many.healthMedianMs} ms; creating one schedule (configuration + POST /schedules) median ${none.createMedianMs} ms vs ${many.createMedianMs} ms; ${load}`,
  ];
}
