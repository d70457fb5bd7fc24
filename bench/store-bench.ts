import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fromPlain, type JsonValue } from '../src/php-compat/index.js';
import type { ConfigStore } from '../src/store/config-store.js';
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
    const job = { endpoint: `resource/${i}`, dataField: 'items', params: { filter: `x${seed}-${i}`, fields: 'id,name,created,updated,owner,tags' } };
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

async function timeUpdates(store: ConfigStore, id: string, count: number, bytes: number, from: number): Promise<number[]> {
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
export async function storeUpdateLatency(via: 'embedded' | 'http', bytes: number, history: number, samples = 50): Promise<StoreLatency> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-store-bench-'));
  const backend = await openEmbeddedStore(path.join(dir, 'store.sqlite'), { GEX_MASTER_KEY: '22'.repeat(32) });
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
export async function concurrentUpdateRate(backend: BackendFactory, processes: number, updates = 300): Promise<ConcurrentUpdateRate> {
  const store = await backend.fresh();
  try {
    const cluster = await startServeCluster(store.location, processes, { GEX_MASTER_KEY: '22'.repeat(32) });
    try {
      await fireConcurrentUpdates(cluster, await createConfiguration(cluster, 'warm-up'), 30);
      const load = await fireConcurrentUpdates(cluster, await createConfiguration(cluster, 'contended'), updates);
      const failed = load.results.filter((r) => r.status !== 200);
      if (failed.length > 0) throw new Error(`${failed.length} of ${updates} updates failed, e.g. ${failed[0].status} ${failed[0].error}`);
      return { store: backend.name, processes, updates, wallMs: Math.round(load.wallMs), updatesPerSecond: load.updatesPerSecond };
    } finally {
      await cluster.stop();
    }
  } finally {
    await store.dispose();
  }
}
