/**
 * gex run against the floor (bench/floor.ts) on the same local paged API, side by side in one
 * run: wall-time ratio, records per second and peak RSS of both. Nested records are also measured
 * against bench/floor-nested.ts, which writes the same three tables as gex.
 */
import { mkdir, mkdtemp, readdir, readFile } from 'node:fs/promises';
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
  /**
   * nested only: the floor that writes the same three tables (bench/floor-nested.ts), gex's wall
   * time over its wall time, and whether its files equal gex's byte for byte
   */
  tablesFloor?: { wallMs: number; recordsPerSecond: number; peakRssMb: number };
  tablesWallRatio?: number;
  identicalTables?: boolean;
}

const GEX = path.join(repoRoot, 'bin', 'gex.js');
const FLOOR = path.join(repoRoot, 'dist', 'bench', 'floor.js');
const TABLES_FLOOR = path.join(repoRoot, 'dist', 'bench', 'floor-nested.js');

/** Whether every table the tables floor wrote equals gex's (`bench.<table>` in out/tables), and gex wrote no other. */
async function sameTables(floorDir: string, gexTablesDir: string): Promise<boolean> {
  const floorTables = (await readdir(floorDir)).sort();
  const gexTables = (await readdir(gexTablesDir)).filter((f) => !f.endsWith('.manifest')).sort();
  if (floorTables.length === 0 || gexTables.join() !== floorTables.map((t) => `bench.${t}`).join()) return false;
  for (const table of floorTables) {
    const [a, b] = await Promise.all([
      readFile(path.join(floorDir, table)),
      readFile(path.join(gexTablesDir, `bench.${table}`)),
    ]);
    if (!a.equals(b)) return false;
  }
  return true;
}

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
export async function compareWithFloor(
  pages: number,
  recordsPerPage: number,
  shape: RecordShape,
  repetitions: number,
  /** the node that runs gex and the floors (the local API keeps this process's) */
  node = process.execPath,
): Promise<FloorComparison> {
  const server = await startPagedServer({ pages, recordsPerPage, shape });
  const dataDir = await pagedDataDir(server.url, recordsPerPage);
  const floorDir = await mkdtemp(path.join(os.tmpdir(), 'gex-floor-'));
  try {
    const gexRuns: ProcessMeasure[] = [];
    const floorRuns: ProcessMeasure[] = [];
    const tablesFloorRuns: ProcessMeasure[] = [];
    const tablesDir = path.join(floorDir, 'tables');
    if (shape === 'nested') await mkdir(tablesDir);
    for (let i = 0; i < repetitions; i++) {
      floorRuns.push(await measureProcess([node, FLOOR, server.url, String(pages), path.join(floorDir, 'items.csv')]));
      if (shape === 'nested')
        tablesFloorRuns.push(await measureProcess([node, TABLES_FLOOR, server.url, String(pages), tablesDir]));
      gexRuns.push(await measureProcess([node, GEX, 'run', '--data-dir', dataDir, '--log-level', 'warn']));
    }
    const records = pages * recordsPerPage;
    const gex = summary(gexRuns, records);
    const floor = summary(floorRuns, records);
    const comparison: FloorComparison = {
      shape,
      pages,
      recordsPerPage,
      repetitions,
      gex,
      floor,
      wallRatio: Math.round((gex.wallMs / floor.wallMs) * 100) / 100,
      rssRatio: Math.round((gex.peakRssMb / floor.peakRssMb) * 100) / 100,
    };
    if (shape === 'nested') {
      comparison.tablesFloor = summary(tablesFloorRuns, records);
      comparison.tablesWallRatio = Math.round((gex.wallMs / comparison.tablesFloor.wallMs) * 100) / 100;
      comparison.identicalTables = await sameTables(tablesDir, path.join(dataDir, 'out', 'tables'));
    }
    return comparison;
  } finally {
    server.stop();
    await removeDir(dataDir);
    await removeDir(floorDir);
  }
}
