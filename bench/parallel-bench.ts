/**
 * Parallel page fetching against an API with real latency: the same 200 pages fetched
 * sequentially (GE's behaviour) and with `api.pagination.concurrency` N, side by side; the tables
 * of every run must be byte-identical to the sequential one.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { measureProcess, pagedDataDir, removeDir, repoRoot } from './measure.js';
import { startPagedServer } from './paged-server-process.js';

export interface ParallelResult {
  pages: number;
  latencyMs: number;
  concurrency: number;
  /** the whole process, start-up included */
  wallMs: number;
  /** sequential wall time / this wall time */
  speedup: number;
  /** the extraction itself, as gex's run summary reports it (without the process start-up) */
  extractionMs: number;
  /** sequential extraction time / this extraction time */
  extractionSpeedup: number;
  identicalOutput: boolean;
}

const GEX = path.join(repoRoot, 'bin', 'gex.js');

async function runWith(
  url: string,
  recordsPerPage: number,
  concurrency: number,
): Promise<{ wallMs: number; extractionMs: number; table: Buffer }> {
  const dir = await pagedDataDir(url, recordsPerPage, concurrency > 1 ? { concurrency } : {});
  try {
    const summaryFile = path.join(dir, 'summary.json');
    const m = await measureProcess([
      process.execPath,
      GEX,
      'run',
      '--data-dir',
      dir,
      '--log-level',
      'warn',
      '--summary',
      summaryFile,
    ]);
    const summary = JSON.parse(await readFile(summaryFile, 'utf8')) as { rows: Array<{ durationMs: number }> };
    return {
      wallMs: m.wallMs,
      extractionMs: summary.rows[0].durationMs,
      table: await readFile(path.join(dir, 'out', 'tables', 'bench.items')),
    };
  } finally {
    await removeDir(dir);
  }
}

export async function parallelSpeedups(
  pages = 200,
  latencyMs = 50,
  levels = [4, 8],
  recordsPerPage = 100,
): Promise<ParallelResult[]> {
  const server = await startPagedServer({ pages, recordsPerPage, shape: 'flat', latencyMs });
  try {
    const sequential = await runWith(server.url, recordsPerPage, 1);
    const results: ParallelResult[] = [
      {
        pages,
        latencyMs,
        concurrency: 1,
        wallMs: Math.round(sequential.wallMs),
        speedup: 1,
        extractionMs: sequential.extractionMs,
        extractionSpeedup: 1,
        identicalOutput: true,
      },
    ];
    for (const concurrency of levels) {
      const run = await runWith(server.url, recordsPerPage, concurrency);
      results.push({
        pages,
        latencyMs,
        concurrency,
        wallMs: Math.round(run.wallMs),
        speedup: Math.round((sequential.wallMs / run.wallMs) * 100) / 100,
        extractionMs: run.extractionMs,
        extractionSpeedup: Math.round((sequential.extractionMs / run.extractionMs) * 100) / 100,
        identicalOutput: run.table.equals(sequential.table),
      });
    }
    return results;
  } finally {
    server.stop();
  }
}
