/**
 * `gex run --config-id` of a paged API on the SQLite store, loading each row's tables into the
 * project's Storage tables against `--no-load` (files only), alternating runs so that drift of a
 * shared machine hits both alike. Each loading run replaces the table (a full load), so every run
 * does the same work.
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fromPlain } from '../src/json/index.js';
import { openEmbeddedStore } from '../test/support/open-store.js';
import { measureProcess, removeDir, repoRoot, type ProcessMeasure } from './measure.js';
import { startPagedServer } from './paged-server-process.js';
import { median } from './store-bench.js';

export interface RunLoadComparison {
  pages: number;
  recordsPerPage: number;
  repetitions: number;
  /** every run's wall time, in the order run */
  loadMs: number[];
  noLoadMs: number[];
  load: { medianMs: number; peakRssMb: number };
  noLoad: { medianMs: number; peakRssMb: number };
  /** loading run / files-only run (medians) */
  ratio: number;
}

const GEX = path.join(repoRoot, 'bin', 'gex.js');
const KEY = { GEX_MASTER_KEY: '5a'.repeat(32) };

export async function runWithLoadVsNoLoad(
  pages: number,
  recordsPerPage: number,
  repetitions: number,
): Promise<RunLoadComparison> {
  const server = await startPagedServer({ pages, recordsPerPage, shape: 'flat' });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-run-load-bench-'));
  const store = path.join(dir, 'store.sqlite');
  try {
    const backend = await openEmbeddedStore(store, KEY);
    try {
      await (
        await backend.localSession()
      ).createConfiguration('ex-generic-v2', {
        name: 'bench',
        configurationId: 'bench',
        configuration: fromPlain({
          parameters: {
            api: { baseUrl: `${server.url}/`, pagination: { method: 'pagenum', limit: recordsPerPage } },
            config: { outputBucket: 'bench', jobs: [{ endpoint: 'items', dataField: 'items' }] },
          },
        }),
      });
    } finally {
      await backend.close();
    }
    const run = (extra: string[]) =>
      measureProcess(
        [
          process.execPath,
          GEX,
          'run',
          '--config-id',
          'bench',
          '--store',
          store,
          '--data-dir',
          path.join(dir, 'data'),
          '--log-level',
          'warn',
          ...extra,
        ],
        KEY,
      );
    // one of each first: the store file and the table exist before anything is timed
    await run([]);
    await run(['--no-load']);
    const load: ProcessMeasure[] = [];
    const noLoad: ProcessMeasure[] = [];
    for (let i = 0; i < repetitions; i++) {
      // alternate which goes first
      if (i % 2 === 0) {
        load.push(await run([]));
        noLoad.push(await run(['--no-load']));
      } else {
        noLoad.push(await run(['--no-load']));
        load.push(await run([]));
      }
    }
    const summary = (runs: ProcessMeasure[]) => ({
      medianMs: Math.round(median(runs.map((r) => r.wallMs))),
      peakRssMb: Math.round(median(runs.map((r) => r.peakRssKb)) / 102.4) / 10,
    });
    const l = summary(load);
    const n = summary(noLoad);
    return {
      pages,
      recordsPerPage,
      repetitions,
      loadMs: load.map((r) => Math.round(r.wallMs)),
      noLoadMs: noLoad.map((r) => Math.round(r.wallMs)),
      load: l,
      noLoad: n,
      ratio: Math.round((l.medianMs / n.medianMs) * 100) / 100,
    };
  } finally {
    server.stop();
    await removeDir(dir);
  }
}
