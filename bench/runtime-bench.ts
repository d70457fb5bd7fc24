/**
 * The supported runtimes side by side: the same build run by this process's Node and by the other
 * one (GEX_BENCH_NODE, the path of a node binary; CI passes Node 24 LTS from .ci/node24). For each:
 * start-up — a short `gex run` of a one-page data folder, with the compile cache (Node ≥ 22.1)
 * warm and turned off — and flat extraction against the floor run by the same Node.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { compareWithFloor, type FloorComparison } from './extraction-bench.js';
import { measureProcess, pagedDataDir, removeDir, repoRoot } from './measure.js';
import { startPagedServer } from './paged-server-process.js';
import { median } from './store-bench.js';

export interface RuntimeFigure {
  node: string;
  version: string;
  /** median wall time of a one-page `gex run`, compile cache warm (undefined: this Node has none) */
  startMs?: number;
  /** the same with the compile cache off (GEX_COMPILE_CACHE=0) */
  startNoCacheMs: number;
  flat: FloorComparison;
}

const GEX = path.join(repoRoot, 'bin', 'gex.js');

function versionOf(node: string): string {
  const result = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${node} does not run: ${result.stderr.slice(0, 300)}`);
  return result.stdout.trim();
}

/** The other Node to measure: GEX_BENCH_NODE, else the one .ci/node24 installed at its default place. */
export function otherNode(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.GEX_BENCH_NODE?.trim()) return env.GEX_BENCH_NODE.trim();
  const installed = path.join(
    env.GEX_NODE24_DIR ?? path.join(env.TMPDIR ?? os.tmpdir(), 'gex-node24'),
    'package',
    'bin',
    'node',
  );
  return existsSync(installed) && installed !== process.execPath ? installed : undefined;
}

/** Median wall time of `repetitions` one-page runs of `node`, after one run that fills the cache. */
async function startTime(node: string, dataDir: string, repetitions: number, env: NodeJS.ProcessEnv): Promise<number> {
  const command = [node, GEX, 'run', '--data-dir', dataDir, '--log-level', 'warn'];
  await measureProcess(command, env);
  const times: number[] = [];
  for (let i = 0; i < repetitions; i++) times.push((await measureProcess(command, env)).wallMs);
  return Math.round(median(times));
}

export async function runtimeFigures(nodes: string[], quick: boolean): Promise<RuntimeFigure[]> {
  // a cache folder of the bench's own, so that a user's cache is neither used nor changed
  const cacheHome = await mkdtemp(path.join(os.tmpdir(), 'gex-bench-cache-'));
  const server = await startPagedServer({ pages: 1, recordsPerPage: 10, shape: 'flat' });
  const dataDir = await pagedDataDir(server.url, 10);
  try {
    const figures: RuntimeFigure[] = [];
    for (const node of nodes) {
      const version = versionOf(node);
      const repetitions = quick ? 3 : 15;
      const cached = Number(version.split('.')[0]) >= 22;
      const startMs = cached
        ? await startTime(node, dataDir, repetitions, { XDG_CACHE_HOME: cacheHome, GEX_COMPILE_CACHE: '' })
        : undefined;
      const startNoCacheMs = await startTime(node, dataDir, repetitions, { GEX_COMPILE_CACHE: '0' });
      const flat = await compareWithFloor(1000, 100, 'flat', quick ? 1 : 7, node);
      figures.push({ node, version, startMs, startNoCacheMs, flat });
    }
    return figures;
  } finally {
    server.stop();
    await removeDir(dataDir);
    await rm(cacheHome, { recursive: true, force: true });
  }
}
