/**
 * Updates per second of the SQLite store with `synchronous=FULL` (gex's default: an acknowledged
 * write survives a power loss) against NORMAL (the last writes may be lost), on this machine:
 * sequential updates on the embedded store, and concurrent updates through one `gex serve`.
 * Run: `npm run build && node dist/bench/durability-bench.js`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { builtinComponents } from '../src/cli/builtin-components.js';
import { openEmbeddedStore } from '../src/store/open-store.js';
import { DURABILITY_LEVELS, DURABILITY_VARIABLE, type SqliteDurability } from '../src/store/sql/sqlite-settings.js';
import { createConfiguration, fireConcurrentUpdates, startServeCluster } from '../test/support/serve-cluster.js';
import { configurationOfSize } from './store-bench.js';

const KEY = { GEX_MASTER_KEY: '33'.repeat(32) };
const C = 'ex-generic-v2';

async function inFreshStore<T>(work: (location: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-durability-bench-'));
  try {
    return await work(path.join(dir, 'store.sqlite'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One update after another of a ~10 KB configuration on the embedded store. */
async function sequentialUpdatesPerSecond(durability: SqliteDurability, updates = 300): Promise<number> {
  return inFreshStore(async (location) => {
    const backend = await openEmbeddedStore(
      location,
      { ...KEY, [DURABILITY_VARIABLE]: durability },
      { builtinComponents: builtinComponents() },
    );
    try {
      const store = await backend.localSession();
      const { id } = await store.createConfiguration(C, {
        name: 'bench',
        configuration: configurationOfSize(10 * 1024, 0),
      });
      const bodies = Array.from({ length: updates }, (_, i) => configurationOfSize(10 * 1024, i + 1));
      const started = performance.now();
      for (const configuration of bodies) await store.updateConfiguration(C, id, { configuration });
      return Math.round((updates / (performance.now() - started)) * 1000);
    } finally {
      await backend.close();
    }
  });
}

/** 300 concurrent PUTs of one configuration through one `gex serve`. */
async function concurrentUpdatesPerSecond(durability: SqliteDurability, updates = 300): Promise<number> {
  return inFreshStore(async (location) => {
    const cluster = await startServeCluster(location, 1, { ...KEY, [DURABILITY_VARIABLE]: durability });
    try {
      await fireConcurrentUpdates(cluster, await createConfiguration(cluster, 'warm-up'), 30);
      const load = await fireConcurrentUpdates(cluster, await createConfiguration(cluster, 'bench'), updates);
      const failed = load.results.filter((r) => r.status !== 200).length;
      if (failed > 0) throw new Error(`${failed} of ${updates} updates failed`);
      return load.updatesPerSecond;
    } finally {
      await cluster.stop();
    }
  });
}

for (let round = 1; round <= 2; round++) {
  for (const durability of DURABILITY_LEVELS) {
    const sequential = await sequentialUpdatesPerSecond(durability);
    const concurrent = await concurrentUpdatesPerSecond(durability);
    console.log(
      `round ${round}, synchronous=${durability.toUpperCase().padEnd(6)}: ${String(sequential).padStart(5)} sequential updates/s (embedded), ${String(concurrent).padStart(5)} concurrent updates/s (gex serve)`,
    );
  }
}
