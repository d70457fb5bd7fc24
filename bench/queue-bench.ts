import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import PQueue from 'p-queue';
import { startFixtureServer, type FixtureServer } from '../test/support/fixture-server/fixture-server.js';
import { runGex, startServe } from '../test/support/cli.js';
import { call, startWorker, untilFinished, type Json } from '../test/support/queue.js';
import { inSchema, withPostgresClient } from '../test/support/store.js';

export const KEY = { GEX_MASTER_KEY: '68'.repeat(32) };
const CONFIGS = '/v2/storage/branch/default/components/ex-generic-v2/configs';

export interface DispatchLatency {
  store: 'SQLite' | 'PostgreSQL';
  /** POST /jobs sent → the job seen `processing`, ms, each with an idle worker */
  samplesMs: number[];
  medianMs: number;
}

export interface QueueThroughput {
  jobs: number;
  configurations: number;
  workers: number;
  concurrency: number;
  /** first POST → last job finished */
  queueMs: number;
  /** the same gex run processes started directly, workers × concurrency at a time */
  floorMs: number;
  ratio: number;
  /** one worker's RSS: idle at start, then idle after each batch of jobs (jobs handled by all workers so far) */
  workerRssMb: Array<{ jobs: number; rssMb: number }>;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 102.4) / 10;
}

export async function stop(children: ChildProcess[]): Promise<void> {
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

/** A store with a token and `count` one-request configurations against `api`. */
export async function prepareStore(location: string, api: FixtureServer, serveUrl: string, count: number) {
  const made = await runGex(['tokens', 'create', '--description', 'bench', '--store', location], KEY);
  if (made.code !== 0) throw new Error(made.stderr);
  const token = made.stdout.trim();
  const configs: string[] = [];
  for (let i = 0; i < count; i++) {
    const configuration = {
      parameters: {
        api: { baseUrl: `${api.url}/v1/` },
        config: { outputBucket: `bench-${i}`, jobs: [{ endpoint: 'users', dataField: 'data' }] },
      },
    };
    const created = await call(serveUrl, token, 'POST', CONFIGS, { name: `c${i}`, configuration });
    if (created.status !== 201) throw new Error(JSON.stringify(created.body));
    configs.push(String(created.body.id));
  }
  return { token, configs };
}

/** `count` jobs POSTed through the Queue API one after another, round the configurations; their ids. */
export async function postJobs(url: string, token: string, configs: string[], count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const job = await call(url, token, 'POST', '/jobs', {
      component: 'ex-generic-v2',
      config: configs[i % configs.length],
    });
    if (job.status !== 201) throw new Error(`POST /jobs: ${job.status} ${JSON.stringify(job.body)}`);
    ids.push(String(job.body.id));
  }
  return ids;
}

/** The jobs once all are finished (each polled in turn, 50 ms apart). */
export async function untilAllFinished(url: string, token: string, ids: string[]): Promise<Json[]> {
  const jobs: Json[] = [];
  for (const id of ids) jobs.push(await untilFinished(url, token, id, 600_000));
  return jobs;
}

/** Sends a job and polls until it is `processing` (5 ms apart); the time it took. */
async function timeToProcessing(url: string, token: string, config: string): Promise<number> {
  const started = performance.now();
  const job = (await call(url, token, 'POST', '/jobs', { component: 'ex-generic-v2', config })).body;
  for (;;) {
    const now = (await call(url, token, 'GET', `/jobs/${job.id}`)).body;
    if (now.status !== 'created' && now.status !== 'waiting') {
      const ms = performance.now() - started;
      await untilFinished(url, token, job.id, 60_000);
      return ms;
    }
    await sleep(5);
  }
}

export async function withApi<T>(work: (api: FixtureServer) => Promise<T>): Promise<T> {
  const api = await startFixtureServer({ record: false, handler: () => ({ body: { data: [{ id: 1, name: 'x' }] } }) });
  try {
    return await work(api);
  } finally {
    await api.close();
  }
}

/**
 * Dispatch latency: an idle worker (SQLite: the server's own pool; PostgreSQL: a `gex worker`
 * beside a server that runs nothing) picks up a new job — POST → `processing`, `samples` times.
 */
export async function dispatchLatency(postgresUrl: string | undefined, samples: number): Promise<DispatchLatency[]> {
  const figures: DispatchLatency[] = [];
  await withApi(async (api) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-bench-queue-'));
    try {
      const sqlite = path.join(dir, 'store.sqlite');
      const served = await startServe(['--store', sqlite, '--workers', '1'], KEY);
      try {
        figures.push(await measureLatency('SQLite', sqlite, served.url, api, samples));
      } finally {
        await stop([served.child]);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    if (!postgresUrl) return;
    await inPostgresSchema(postgresUrl, async (store) => {
      const served = await startServe(['--store', store, '--workers', '0'], KEY);
      const worker = await startWorker(store, KEY);
      try {
        figures.push(await measureLatency('PostgreSQL', store, served.url, api, samples));
      } finally {
        await stop([served.child, worker.child]);
      }
    });
  });
  return figures;
}

async function measureLatency(
  store: DispatchLatency['store'],
  location: string,
  url: string,
  api: FixtureServer,
  samples: number,
): Promise<DispatchLatency> {
  const { token, configs } = await prepareStore(location, api, url, 1);
  await timeToProcessing(url, token, configs[0]); // warm-up: connections, pg-boss's first fetch
  const samplesMs: number[] = [];
  for (let i = 0; i < samples; i++) {
    await sleep(300); // the worker idle, between two of its polls
    samplesMs.push(Math.round(await timeToProcessing(url, token, configs[0])));
  }
  return { store, samplesMs, medianMs: median(samplesMs) };
}

export async function inPostgresSchema(url: string, work: (store: string) => Promise<void>): Promise<void> {
  const schema = `gex_bench_queue_${randomBytes(4).toString('hex')}`;
  await withPostgresClient(url, (c) => c.query(`CREATE SCHEMA ${schema}`));
  try {
    await work(inSchema(url, schema));
  } finally {
    await withPostgresClient(url, (c) =>
      c.query(`DROP SCHEMA ${schema} CASCADE; DROP SCHEMA IF EXISTS ${schema}_pgboss CASCADE`),
    );
  }
}

/**
 * Throughput on PostgreSQL: `jobs` jobs over `configurations` configurations through a server that
 * runs nothing and `workers` × `concurrency` gex workers, against the floor of starting the same
 * `gex run` processes workers × concurrency at a time; then on to `rssJobs` jobs in all, one
 * worker's idle RSS read between batches.
 */
export async function queueThroughput(
  postgresUrl: string,
  options: { jobs: number; configurations: number; workers: number; concurrency: number; rssJobs: number },
): Promise<QueueThroughput> {
  let figure: QueueThroughput | undefined;
  await withApi(async (api) =>
    inPostgresSchema(postgresUrl, async (store) => {
      const served = await startServe(['--store', store, '--workers', '0'], KEY);
      const { token, configs } = await prepareStore(store, api, served.url, options.configurations);
      const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-bench-floor-'));
      const workers = await Promise.all(
        Array.from({ length: options.workers }, () =>
          startWorker(store, KEY, ['--concurrency', String(options.concurrency)]),
        ),
      );
      try {
        await sleep(2000);
        const workerRssMb = [{ jobs: 0, rssMb: rssMb(workers[0].child.pid!) }];
        const runBatch = async (count: number) => {
          await untilAllFinished(served.url, token, await postJobs(served.url, token, configs, count));
        };
        const started = performance.now();
        await runBatch(options.jobs);
        const queueMs = Math.round(performance.now() - started);
        let handled = options.jobs;
        await sleep(1000);
        workerRssMb.push({ jobs: handled, rssMb: rssMb(workers[0].child.pid!) });

        // the floor: the same runs, started directly
        const floor = new PQueue({ concurrency: options.workers * options.concurrency });
        const floorStarted = performance.now();
        for (let i = 0; i < options.jobs; i++) {
          const config = configs[i % configs.length];
          void floor.add(async () => {
            const dataDir = path.join(dir, String(i));
            const r = await runGex(
              [
                'run',
                '--config-id',
                config,
                '--store',
                store,
                '--data-dir',
                dataDir,
                '--wait',
                '60',
                '--log-level',
                'warn',
              ],
              KEY,
            );
            if (r.code !== 0) throw new Error(`floor run ${i}: ${r.stderr}`);
            await rm(dataDir, { recursive: true, force: true });
          });
        }
        await floor.onIdle();
        const floorMs = Math.round(performance.now() - floorStarted);

        const batch = Math.max(options.jobs, 100);
        while (handled < options.rssJobs) {
          const count = Math.min(batch, options.rssJobs - handled);
          await runBatch(count);
          handled += count;
          await sleep(1000);
          workerRssMb.push({ jobs: handled, rssMb: rssMb(workers[0].child.pid!) });
        }
        figure = {
          jobs: options.jobs,
          configurations: options.configurations,
          workers: options.workers,
          concurrency: options.concurrency,
          queueMs,
          floorMs,
          ratio: Math.round((queueMs / floorMs) * 100) / 100,
          workerRssMb,
        };
      } finally {
        await stop([served.child, ...workers.map((w) => w.child)]);
        await rm(dir, { recursive: true, force: true });
      }
    }),
  );
  return figure!;
}

/** issue 25's targets */
const DISPATCH_TARGET_MS = 100;
const THROUGHPUT_TARGET = 1.3;
/** an idle worker's RSS may grow this much over all its jobs and still count as flat */
const RSS_GROWTH_TARGET_MB = 10;

/** The queue's figures, printed with their verdicts. */
export async function queueFigures(postgresUrl: string | undefined, quick: boolean): Promise<Record<string, unknown>> {
  const verdict = (ok: boolean) => (ok ? 'target met' : 'TARGET MISSED');
  const latency = await dispatchLatency(postgresUrl, quick ? 5 : 20);
  for (const l of latency)
    console.log(
      `${l.store.padEnd(10)} POST /jobs → processing, idle worker: median ${l.medianMs} ms (${verdict(l.medianMs <= DISPATCH_TARGET_MS)}: <= ${DISPATCH_TARGET_MS}), samples ${l.samplesMs.join(' ')}`,
    );
  if (!postgresUrl) {
    console.log('PostgreSQL: skipped (set GEX_TEST_POSTGRES): throughput and worker memory not measured');
    return { latency };
  }
  const throughput = await queueThroughput(postgresUrl, {
    jobs: quick ? 24 : 200,
    configurations: 20,
    workers: 2,
    concurrency: 2,
    rssJobs: quick ? 48 : 1000,
  });
  console.log(
    `PostgreSQL ${throughput.jobs} jobs (${throughput.configurations} configurations), ${throughput.workers} workers × ${throughput.concurrency}: queue ${throughput.queueMs} ms | floor (the same gex runs, ${throughput.workers * throughput.concurrency} at a time) ${throughput.floorMs} ms | ratio ${throughput.ratio.toFixed(2)} (${verdict(throughput.ratio <= THROUGHPUT_TARGET)}: <= ${THROUGHPUT_TARGET})`,
  );
  const rss = throughput.workerRssMb;
  const growth = Math.round((rss[rss.length - 1].rssMb - rss[0].rssMb) * 10) / 10;
  console.log(
    `idle worker RSS after N jobs: ${rss.map((r) => `${r.jobs}: ${r.rssMb} MB`).join(', ')} — growth ${growth} MB (${verdict(growth <= RSS_GROWTH_TARGET_MB)}: flat, <= ${RSS_GROWTH_TARGET_MB} MB)`,
  );
  return { latency, throughput };
}
