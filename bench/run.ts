/**
 * `npm run bench`: extraction throughput and peak memory of `gex run` against a local paged API
 * served from a separate process. Results go to the terminal and bench/results.json.
 */
import { fork } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { measureProcess, pagedDataDir, removeDir, repoRoot } from './measure.js';
import { POSTGRES_EXAMPLE, postgresBackendAt, sqliteBackend } from '../test/support/store.js';
import { concurrentUpdateRate, storeUpdateLatency, type ConcurrentUpdateRate, type StoreLatency } from './store-bench.js';

interface ServerHandle {
  url: string;
  stop(): void;
}

/** Starts bench/paged-server in its own process so it does not share CPU time with gex's measurement. */
function startServer(pages: number, recordsPerPage: number, nested = false): Promise<ServerHandle> {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(repoRoot, 'dist', 'bench', 'paged-server.js'), [String(pages), String(recordsPerPage), nested ? 'nested' : 'flat'], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.once('message', (m) => resolve({ url: String((m as { url: string }).url), stop: () => child.kill() }));
    child.once('error', reject);
  });
}

interface Result {
  scenario: string;
  pages: number;
  recordsPerPage: number;
  wallMs: number;
  recordsPerSecond: number;
  peakRssMb: number;
}

async function gexRun(pages: number, recordsPerPage: number, nested: boolean): Promise<Result> {
  const server = await startServer(pages, recordsPerPage, nested);
  const dir = await pagedDataDir(server.url, recordsPerPage);
  try {
    const m = await measureProcess([process.execPath, path.join(repoRoot, 'bin', 'gex.js'), 'run', '--data-dir', dir, '--log-level', 'warn']);
    const records = pages * recordsPerPage;
    return {
      scenario: `gex run, ${nested ? 'nested records with child tables' : 'flat records'}`,
      pages,
      recordsPerPage,
      wallMs: Math.round(m.wallMs),
      recordsPerSecond: Math.round(records / (m.wallMs / 1000)),
      peakRssMb: Math.round(m.peakRssKb / 102.4) / 10,
    };
  } finally {
    server.stop();
    await removeDir(dir);
  }
}

const sizes = (process.env.GEX_BENCH_PAGES ?? '100,1000').split(',').map(Number);
const results: Result[] = [];
for (const nested of [false, true]) {
  for (const pages of sizes) {
    const r = await gexRun(pages, 100, nested);
    results.push(r);
    console.log(
      `${r.scenario.padEnd(45)} P=${String(pages).padStart(6)} R=100  ${String(r.wallMs).padStart(7)} ms  ` +
        `${String(r.recordsPerSecond).padStart(7)} records/s  peak RSS ${r.peakRssMb} MB`,
    );
  }
}
const store: StoreLatency[] = [];
for (const via of ['embedded', 'http'] as const) {
  for (const history of [1, 1000]) {
    const r = await storeUpdateLatency(via, 100 * 1024, history);
    store.push(r);
    console.log(`store update (${via.padEnd(8)}), 100 KB configuration, ${String(history).padStart(5)} versions of history: median ${r.medianUpdateMs} ms`);
  }
}
// concurrent updates of one configuration through gex serve: SQLite in one process, PostgreSQL in one and three
const concurrent: ConcurrentUpdateRate[] = [];
const postgresUrl = process.env.GEX_TEST_POSTGRES || POSTGRES_EXAMPLE;
for (const [backend, processes] of [[sqliteBackend, 1], [postgresBackendAt(postgresUrl), 1], [postgresBackendAt(postgresUrl), 3]] as const) {
  try {
    const r = await concurrentUpdateRate(backend, processes);
    concurrent.push(r);
    console.log(`concurrent updates, ${r.updates} at once, ${r.store.padEnd(10)} ${processes} gex serve: ${String(r.updatesPerSecond).padStart(5)} updates/s (${r.wallMs} ms)`);
  } catch (error) {
    if (backend.name === 'SQLite') throw error;
    console.log(`concurrent updates, ${backend.name}: skipped (${(error as Error).message.split('\n')[0]}; set GEX_TEST_POSTGRES to a reachable database)`);
  }
}
await writeFile(path.join(repoRoot, 'bench', 'results.json'), `${JSON.stringify({ date: new Date().toISOString(), results, store, concurrent }, null, 2)}\n`);
