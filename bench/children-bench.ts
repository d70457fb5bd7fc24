/**
 * Child jobs against an API with real latency: a parent list of P records, one detail request per
 * record (a child job), fetched one by one (Generic Extractor's way) and with the child's
 * `concurrency` N, side by side; every run's tables must be byte-identical to the sequential one.
 * Also against an API that admits only K requests per second (429 + Retry-After beyond).
 */
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { measureProcess, removeDir, repoRoot } from './measure.js';
import { startPagedServer } from './paged-server-process.js';
import { settledRate } from './rate-limit-bench.js';

export interface ChildrenResult {
  parents: number;
  latencyMs: number;
  concurrency: number;
  /** the extraction, as the run summary reports it (without the process start-up) */
  extractionMs: number;
  /** sequential extraction time / this one */
  speedup: number;
  identicalOutput: boolean;
}

export interface ChildrenRateLimitResult {
  parents: number;
  allowedPerSecond: number;
  concurrency: number;
  wallMs: number;
  throttledResponses: number;
  /** served requests per second after the first second (the burst allowance) */
  settledPerSecond: number;
  ratio: number;
  identicalOutput: boolean;
}

const GEX = path.join(repoRoot, 'bin', 'gex.js');
const PAGE = 100;

async function childrenDataDir(baseUrl: string, concurrency: number): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-bench-children-'));
  await mkdir(path.join(dir, 'in'), { recursive: true });
  const detail = {
    endpoint: 'items/{id}',
    dataType: 'detail',
    dataField: '.',
    placeholders: { id: 'id' },
    ...(concurrency > 1 ? { concurrency } : {}),
  };
  const config = {
    parameters: {
      api: { baseUrl: `${baseUrl}/`, pagination: { method: 'pagenum', limit: PAGE }, retryConfig: { maxRetries: 50 } },
      config: { outputBucket: 'bench', jobs: [{ endpoint: 'items', dataField: 'items', children: [detail] }] },
    },
  };
  await writeFile(path.join(dir, 'config.json'), JSON.stringify(config));
  return dir;
}

/** Every table of a run, file name → bytes, in name order. */
async function tables(dir: string): Promise<string> {
  const out = path.join(dir, 'out', 'tables');
  const names = (await readdir(out)).sort();
  const parts = await Promise.all(
    names.map(async (name) => `${name}\n${await readFile(path.join(out, name), 'utf8')}`),
  );
  return parts.join('\n');
}

async function runWith(
  url: string,
  concurrency: number,
): Promise<{ wallMs: number; extractionMs: number; tables: string }> {
  const dir = await childrenDataDir(url, concurrency);
  try {
    const summaryFile = path.join(dir, 'summary.json');
    const m = await measureProcess([
      process.execPath,
      GEX,
      'run',
      '--data-dir',
      dir,
      '--log-level',
      'error',
      '--summary',
      summaryFile,
    ]);
    const summary = JSON.parse(await readFile(summaryFile, 'utf8')) as { rows: Array<{ durationMs: number }> };
    return { wallMs: m.wallMs, extractionMs: summary.rows[0].durationMs, tables: await tables(dir) };
  } finally {
    await removeDir(dir);
  }
}

export async function childrenSpeedups(parents = 500, latencyMs = 50, levels = [4, 8]): Promise<ChildrenResult[]> {
  const server = await startPagedServer({ pages: parents / PAGE, recordsPerPage: PAGE, shape: 'flat', latencyMs });
  try {
    const sequential = await runWith(server.url, 1);
    const results: ChildrenResult[] = [
      { parents, latencyMs, concurrency: 1, extractionMs: sequential.extractionMs, speedup: 1, identicalOutput: true },
    ];
    for (const concurrency of levels) {
      const run = await runWith(server.url, concurrency);
      results.push({
        parents,
        latencyMs,
        concurrency,
        extractionMs: run.extractionMs,
        speedup: Math.round((sequential.extractionMs / run.extractionMs) * 100) / 100,
        identicalOutput: run.tables === sequential.tables,
      });
    }
    return results;
  } finally {
    server.stop();
  }
}

export async function childrenRateLimited(
  parents = 100,
  allowedPerSecond = 20,
  concurrency = 8,
  latencyMs = 50,
): Promise<ChildrenRateLimitResult> {
  const open = await startPagedServer({ pages: parents / PAGE, recordsPerPage: PAGE, shape: 'flat', latencyMs });
  const limited = await startPagedServer({
    pages: parents / PAGE,
    recordsPerPage: PAGE,
    shape: 'flat',
    latencyMs,
    ratePerSecond: allowedPerSecond,
  });
  try {
    const reference = await runWith(open.url, 1);
    const run = await runWith(limited.url, concurrency);
    const stats = await limited.stats();
    const settledPerSecond = settledRate(stats.servedAt);
    return {
      parents,
      allowedPerSecond,
      concurrency,
      wallMs: Math.round(run.wallMs),
      throttledResponses: stats.throttled,
      settledPerSecond,
      ratio: Math.round((settledPerSecond / allowedPerSecond) * 100) / 100,
      identicalOutput: run.tables === reference.tables,
    };
  } finally {
    open.stop();
    limited.stop();
  }
}
