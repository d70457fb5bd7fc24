/**
 * gex run against the floor (bench/floor.ts) on the same local paged API, side by side in one
 * run: wall-time ratio, records per second and peak RSS of both.
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { measureProcess, pagedDataDir, removeDir, repoRoot, type ProcessMeasure } from './measure.js';
import { startPagedServer, type RecordShape } from './paged-server-process.js';
import { median } from './store-bench.js';

export interface FloorComparison {
  shape: RecordShape;
  pages: number;
  recordsPerPage: number;
  repetitions: number;
  gex: { wallMs: number; recordsPerSecond: number; peakRssMb: number };
  floor: { wallMs: number; recordsPerSecond: number; peakRssMb: number };
  /** gex wall time / floor wall time (medians) */
  wallRatio: number;
  /** gex peak RSS / floor peak RSS (medians) */
  rssRatio: number;
}

const GEX = path.join(repoRoot, 'bin', 'gex.js');
const FLOOR = path.join(repoRoot, 'dist', 'bench', 'floor.js');

function summary(runs: ProcessMeasure[], records: number) {
  const wallMs = median(runs.map((r) => r.wallMs));
  return {
    wallMs: Math.round(wallMs),
    recordsPerSecond: Math.round(records / (wallMs / 1000)),
    peakRssMb: Math.round(median(runs.map((r) => r.peakRssKb)) / 102.4) / 10,
  };
}

/**
 * Runs gex and the floor `repetitions` times each, alternating so that drift of a shared machine
 * hits both alike, against one server process; reports medians.
 */
export async function compareWithFloor(pages: number, recordsPerPage: number, shape: RecordShape, repetitions: number): Promise<FloorComparison> {
  const server = await startPagedServer({ pages, recordsPerPage, shape });
  const dataDir = await pagedDataDir(server.url, recordsPerPage);
  const floorDir = await mkdtemp(path.join(os.tmpdir(), 'gex-floor-'));
  try {
    const gexRuns: ProcessMeasure[] = [];
    const floorRuns: ProcessMeasure[] = [];
    for (let i = 0; i < repetitions; i++) {
      floorRuns.push(await measureProcess([process.execPath, FLOOR, server.url, String(pages), path.join(floorDir, 'items.csv')]));
      gexRuns.push(await measureProcess([process.execPath, GEX, 'run', '--data-dir', dataDir, '--log-level', 'warn']));
    }
    const records = pages * recordsPerPage;
    const gex = summary(gexRuns, records);
    const floor = summary(floorRuns, records);
    return {
      shape,
      pages,
      recordsPerPage,
      repetitions,
      gex,
      floor,
      wallRatio: Math.round((gex.wallMs / floor.wallMs) * 100) / 100,
      rssRatio: Math.round((gex.peakRssMb / floor.peakRssMb) * 100) / 100,
    };
  } finally {
    server.stop();
    await removeDir(dataDir);
    await removeDir(floorDir);
  }
}
