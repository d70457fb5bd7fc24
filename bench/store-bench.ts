import { fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { repoRoot } from './measure.js';
import { fromPlain, type JsonValue } from '../src/json/index.js';
import type { ConfigStore } from '../src/store/config-store.js';
import { builtinComponents } from '../src/cli/builtin-components.js';
import { openEmbeddedStore } from '../src/store/open-store.js';
import { HttpConfigStore } from '../src/store/remote/http-config-store.js';
import { buildServer } from '../src/server/app.js';
import { createConfiguration, fireConcurrentUpdates, startServeCluster } from '../test/support/serve-cluster.js';
import type { BackendFactory } from '../test/support/store.js';

const C = 'ex-generic-v2';

/** A configuration body of about `bytes` bytes (jobs with params, like a large real one). */
export function configurationOfSize(bytes: number, seed: number): JsonValue {
  const jobs = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const job = {
      endpoint: `resource/${i}`,
      dataField: 'items',
      params: { filter: `x${seed}-${i}`, fields: 'id,name,created,updated,owner,tags' },
    };
    size += JSON.stringify(job).length + 1;
    jobs.push(job);
  }
  return fromPlain({ parameters: { api: { baseUrl: 'https://api.example.com/' }, config: { jobs } } });
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function timeUpdates(
  store: ConfigStore,
  id: string,
  count: number,
  bytes: number,
  from: number,
): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const body = configurationOfSize(bytes, from + i);
    const t = process.hrtime.bigint();
    await store.updateConfiguration(C, id, { configuration: body });
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return times;
}

export interface StoreLatency {
  via: 'embedded' | 'http';
  configurationBytes: number;
  history: number;
  medianUpdateMs: number;
}

/**
 * Median latency of updating a configuration of `bytes` with `history` versions behind it, on the
 * embedded SQLite store directly or through `gex serve`'s HTTP API (loopback).
 */
export async function storeUpdateLatency(
  via: 'embedded' | 'http',
  bytes: number,
  history: number,
  samples = 50,
): Promise<StoreLatency> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-store-bench-'));
  const backend = await openEmbeddedStore(
    path.join(dir, 'store.sqlite'),
    { GEX_MASTER_KEY: '22'.repeat(32) },
    { builtinComponents: builtinComponents() },
  );
  const app = via === 'http' ? await buildServer({ backend }) : undefined;
  try {
    let store: ConfigStore = await backend.localSession();
    if (app) {
      const { token } = await backend.createToken({ description: 'bench' });
      store = new HttpConfigStore({ url: await app.listen({ port: 0, host: '127.0.0.1' }), token });
    }
    const c = await store.createConfiguration(C, { name: 'bench', configuration: configurationOfSize(bytes, 0) });
    await timeUpdates(store, c.id, history - 1, bytes, 1);
    const times = await timeUpdates(store, c.id, samples, bytes, history);
    return { via, configurationBytes: bytes, history, medianUpdateMs: Math.round(median(times) * 100) / 100 };
  } finally {
    await app?.close();
    await backend.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export interface ConcurrentUpdateRate {
  store: BackendFactory['name'];
  processes: number;
  updates: number;
  wallMs: number;
  updatesPerSecond: number;
}

/**
 * Updates per second when `updates` concurrent PUTs of one configuration hit `processes` real
 * `gex serve` processes on one fresh store (after a warm-up on another configuration) — the
 * figure of issue 6's multi-process test. Every update must succeed.
 */
export async function concurrentUpdateRate(
  backend: BackendFactory,
  processes: number,
  updates = 300,
): Promise<ConcurrentUpdateRate> {
  const store = await backend.fresh();
  try {
    const cluster = await startServeCluster(store.location, processes, { GEX_MASTER_KEY: '22'.repeat(32) });
    try {
      await fireConcurrentUpdates(cluster, await createConfiguration(cluster, 'warm-up'), 30);
      const load = await fireConcurrentUpdates(cluster, await createConfiguration(cluster, 'contended'), updates);
      const failed = load.results.filter((r) => r.status !== 200);
      if (failed.length > 0)
        throw new Error(`${failed.length} of ${updates} updates failed, e.g. ${failed[0].status} ${failed[0].error}`);
      return {
        store: backend.name,
        processes,
        updates,
        wallMs: Math.round(load.wallMs),
        updatesPerSecond: load.updatesPerSecond,
      };
    } finally {
      await cluster.stop();
    }
  } finally {
    await store.dispose();
  }
}

async function withEmbeddedStore<T>(
  work: (store: ConfigStore, backend: Awaited<ReturnType<typeof openEmbeddedStore>>) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-store-bench-'));
  const backend = await openEmbeddedStore(
    path.join(dir, 'store.sqlite'),
    { GEX_MASTER_KEY: '22'.repeat(32) },
    { builtinComponents: builtinComponents() },
  );
  try {
    return await work(await backend.localSession(), backend);
  } finally {
    await backend.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function medianMs(samples: number, operation: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t = process.hrtime.bigint();
    await operation();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return Math.round(median(times) * 100) / 100;
}

export interface HistoryLatency {
  configurationBytes: number;
  longHistory: number;
  /** median update latency with 1 version behind it, and with `longHistory` versions */
  shortMedianMs: number;
  longMedianMs: number;
  /** long / short: 1 means no work proportional to the history */
  ratio: number;
  /** median time to list the newest 100 versions, and the oldest 100 (offset), of the long one */
  listNewestMs: number;
  listOldestMs: number;
}

/**
 * Update latency of a configuration with one version against one with `longHistory` versions, in
 * the same SQLite store, measured alternately so that both see the same machine.
 */
export async function historyLatency(bytes = 10 * 1024, longHistory = 10_000, samples = 40): Promise<HistoryLatency> {
  return withEmbeddedStore(async (store) => {
    const long = await store.createConfiguration(C, { name: 'long', configuration: configurationOfSize(bytes, 0) });
    for (let i = 1; i < longHistory; i++)
      await store.updateConfiguration(C, long.id, { configuration: configurationOfSize(bytes, i) });
    const shortTimes: number[] = [];
    const longTimes: number[] = [];
    const timeUpdate = async (id: string, times: number[], seed: number) => {
      const body = configurationOfSize(bytes, seed);
      const t = process.hrtime.bigint();
      await store.updateConfiguration(C, id, { configuration: body });
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    };
    for (let i = 0; i < samples; i++) {
      // a fresh configuration each time: exactly one version behind the measured update
      const short = await store.createConfiguration(C, {
        name: `short ${i}`,
        configuration: configurationOfSize(bytes, 0),
      });
      await timeUpdate(short.id, shortTimes, longHistory + i);
      await timeUpdate(long.id, longTimes, longHistory + i);
    }
    const shortMedianMs = Math.round(median(shortTimes) * 100) / 100;
    const longMedianMs = Math.round(median(longTimes) * 100) / 100;
    return {
      configurationBytes: bytes,
      longHistory,
      shortMedianMs,
      longMedianMs,
      ratio: Math.round((longMedianMs / shortMedianMs) * 100) / 100,
      listNewestMs: await medianMs(20, () => store.listConfigurationVersions(C, long.id, { limit: 100 })),
      listOldestMs: await medianMs(20, () =>
        store.listConfigurationVersions(C, long.id, { limit: 100, offset: longHistory - 100 }),
      ),
    };
  });
}

export interface RowsDetailLatency {
  rows: number;
  embeddedMedianMs: number;
  /** repeated reads through gex serve: after the first, from the read cache */
  httpMedianMs: number;
  /** through gex serve with the read cache off */
  httpUncachedMedianMs: number;
}

/** Detail (configuration with all its rows) of a configuration with `rows` rows: embedded and through `gex serve`. */
export async function rowsDetailLatency(rows = 1000, samples = 30): Promise<RowsDetailLatency> {
  return withEmbeddedStore(async (store, backend) => {
    const c = await store.createConfiguration(C, { name: 'many rows', configuration: configurationOfSize(2048, 0) });
    for (let i = 0; i < rows; i++)
      await store.createRow(C, c.id, { name: `row ${i}`, configuration: configurationOfSize(512, i) });
    const embeddedMedianMs = await medianMs(samples, () => store.getConfiguration(C, c.id));
    const { token } = await backend.createToken({ description: 'bench' });
    const overHttp = async (readCache: boolean) => {
      const app = await buildServer({ backend, readCache: readCache ? undefined : false });
      try {
        const remote = new HttpConfigStore({ url: await app.listen({ port: 0, host: '127.0.0.1' }), token });
        return await medianMs(samples, () => remote.getConfiguration(C, c.id));
      } finally {
        await app.close();
      }
    };
    return { rows, embeddedMedianMs, httpMedianMs: await overHttp(true), httpUncachedMedianMs: await overHttp(false) };
  });
}

export interface ServeThroughput {
  connections: number;
  seconds: number;
  /** gex serve as it runs: repeated reads of an unchanged configuration come from the read cache */
  detailRequestsPerSecond: number;
  /** with the read cache off: every request reads the store, decodes and encodes */
  uncachedRequestsPerSecond: number;
  trivialRequestsPerSecond: number;
  /** detail / trivial */
  ratio: number;
  /** uncached / trivial */
  uncachedRatio: number;
}

interface ServeTarget {
  url: string;
  uncachedUrl: string;
  bareUrl: string;
  trivialUrl: string;
  token: string;
  configId: string;
}

/** Runs `fn` against bench/serve-target.ts in its own process; `load(url)` gives requests per second. */
async function withServeTarget<T>(
  seconds: number,
  connections: number,
  fn: (target: ServeTarget, load: (url: string) => Promise<number>) => Promise<T>,
): Promise<T> {
  const child = fork(path.join(repoRoot, 'dist', 'bench', 'serve-target.js'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const [target] = (await once(child, 'message')) as [ServeTarget];
    const load = async (url: string): Promise<number> => {
      const result = await autocannon({
        url,
        connections,
        duration: seconds,
        headers: { 'X-StorageApi-Token': target.token },
      });
      if (result.non2xx > 0 || result.errors > 0)
        throw new Error(`${url}: ${result.non2xx} non-2xx responses, ${result.errors} errors`);
      return Math.round(result.requests.average);
    };
    // warm every route up, then measure
    const headers = { 'X-StorageApi-Token': target.token };
    for (const url of [
      target.trivialUrl,
      ...[target.url, target.bareUrl, target.uncachedUrl].map((u) => u + detailPathOf(target)),
    ]) {
      await autocannon({ url, connections, duration: 1, headers });
    }
    return await fn(target, load);
  } finally {
    child.kill();
  }
}

function detailPathOf(target: ServeTarget): string {
  return `/v2/storage/components/${C}/configs/${target.configId}`;
}

/**
 * `gex serve` GET configuration detail under a loopback load generator (autocannon), against a
 * trivial JSON route of Fastify in the same server process, in the same run. The server runs in its own
 * process so that it does not share a core with the load generator.
 */
export async function serveThroughput(seconds = 5, connections = 10): Promise<ServeThroughput> {
  return withServeTarget(seconds, connections, async (target, load) => {
    const trivialRequestsPerSecond = await load(target.trivialUrl);
    const detailRequestsPerSecond = await load(target.url + detailPathOf(target));
    const uncachedRequestsPerSecond = await load(target.uncachedUrl + detailPathOf(target));
    const ratio = (n: number) => Math.round((n / trivialRequestsPerSecond) * 100) / 100;
    return {
      connections,
      seconds,
      detailRequestsPerSecond,
      uncachedRequestsPerSecond,
      trivialRequestsPerSecond,
      ratio: ratio(detailRequestsPerSecond),
      uncachedRatio: ratio(uncachedRequestsPerSecond),
    };
  });
}

export interface ServeOverhead {
  rounds: number;
  seconds: number;
  /** GET detail req/s of each round: gex serve as it runs (request log at info, metrics) */
  operated: number[];
  /** the same app without logger and metrics, measured alternately with `operated` */
  bare: number[];
  /** Fastify's trivial route, once */
  trivial: number;
  medianOperated: number;
  medianBare: number;
  /** 1 - median operated / median bare */
  drop: number;
}

/**
 * What the request log and metrics cost on the `gex serve GET detail vs Fastify` figure: the
 * operated and the bare app on one store in one process, loaded alternately round by round so
 * that the machine's drift hits both alike.
 */
export async function serveOverhead(rounds = 5, seconds = 3, connections = 10): Promise<ServeOverhead> {
  return withServeTarget(seconds, connections, async (target, load) => {
    const operated: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < rounds; i++) {
      // alternate which goes first, so neither always gets the warmer machine
      const pair = i % 2 === 0 ? [target.bareUrl, target.url] : [target.url, target.bareUrl];
      for (const url of pair) (url === target.url ? operated : bare).push(await load(url + detailPathOf(target)));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const medianOperated = median(operated);
    const medianBare = median(bare);
    const trivial = await load(target.trivialUrl);
    return {
      rounds,
      seconds,
      operated,
      bare,
      trivial,
      medianOperated,
      medianBare,
      drop: Math.round((1 - medianOperated / medianBare) * 1000) / 1000,
    };
  });
}
