import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { localToken } from '../src/store/embedded/tokens.js';
import { ProjectTables } from '../src/store/tables/index.js';
import { inSchema, withPostgresClient, type BackendFactory, type FreshStore } from '../test/support/store.js';
import { openEmbeddedStore } from '../test/support/open-store.js';

const CHILD = fileURLToPath(new URL('./table-load-child.js', import.meta.url));
const KEY = { GEX_MASTER_KEY: '44'.repeat(32) };
const run = promisify(execFile);
const TABLE = 'in.c-bench.rows';

interface Measured {
  ms: number;
  rows: number;
  peakRssMb: number;
}

export interface LoadFigure extends Measured {
  rowsPerSecond: number;
}

export interface TableLoadComparison {
  store: BackendFactory['name'];
  rows: number;
  fileMb: number;
  floor: LoadFigure;
  /** full load into a new table (no key) */
  full: LoadFigure;
  /** full load into a new table with primary key id (the incremental load's starting point) */
  fullWithKey: LoadFigure;
  /** incremental load with primary key id into the keyed table: half the file's keys are new */
  incremental: LoadFigure;
  /**
   * PostgreSQL only: the same incremental load written directly with pg — COPY into a stage, one
   * INSERT … ON CONFLICT … DO UPDATE — into a table as the full load with a key left it
   */
  upsertFloor?: LoadFigure;
  /** gex time / floor time */
  fullRatio: number;
  incrementalRatio: number;
  /** gex's incremental load time / the upsert floor's */
  upsertRatio?: number;
  rowsAfterIncremental: number;
}

/**
 * Writes `rows` rows × 10 columns (~100 bytes a row, quotes, commas and doubled quotes among the
 * values) without holding the file in memory; ids from `firstId`, values varied by `seed`.
 */
export async function writeBenchCsv(file: string, rows: number, firstId: number, seed: string): Promise<void> {
  const out = createWriteStream(file);
  out.write('id,name,note,kind,amount,tags,quote,created,bucket,extra\n');
  for (let start = 0; start < rows; start += 5000) {
    let chunk = '';
    for (let i = start; i < Math.min(rows, start + 5000); i++) {
      const id = firstId + i;
      chunk += `${id},name ${id},"note, ${seed} ${id}",${seed},${(id * 7919) % 100_000},alpha beta,"say ""hi""",2025-01-01T00:00:00Z,${id % 13},${seed}-${id % 97}\n`;
    }
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

async function child(args: string[]): Promise<LoadFigure> {
  const { stdout } = await run(process.execPath, [CHILD, ...args], { maxBuffer: 1024 * 1024 });
  const m = JSON.parse(stdout) as Measured;
  return { ...m, rowsPerSecond: Math.round((m.rows / m.ms) * 1000) };
}

async function withStore<T>(fresh: FreshStore, work: (location: string, projectId: number) => Promise<T>): Promise<T> {
  try {
    const backend = await openEmbeddedStore(fresh.location, KEY);
    const projectId = (await localToken(backend.db, 'default')).projectId;
    await backend.close();
    return await work(fresh.location, projectId);
  } finally {
    await fresh.dispose();
  }
}

async function rowsCount(location: string, projectId: number): Promise<number> {
  const backend = await openEmbeddedStore(location, KEY);
  try {
    return (await new ProjectTables(backend.db, projectId).table(TABLE)).rowsCount;
  } finally {
    await backend.close();
  }
}

/** A floor run: a plain table in a scratch SQLite file, or in a scratch PostgreSQL schema. */
async function floorRun(
  backend: BackendFactory,
  postgresUrl: string | undefined,
  file: string,
  dir: string,
): Promise<LoadFigure> {
  if (backend.name === 'SQLite') {
    const location = path.join(dir, `floor-${Date.now()}.sqlite`);
    try {
      return await child(['sqlite-floor', location, file]);
    } finally {
      await rm(location, { force: true });
      await rm(`${location}-wal`, { force: true });
      await rm(`${location}-shm`, { force: true });
    }
  }
  const schema = `gex_bench_floor_${process.pid}_${Date.now()}`;
  await withPostgresClient(postgresUrl!, (c) => c.query(`CREATE SCHEMA ${schema}`));
  try {
    return await child(['postgres-floor', inSchema(postgresUrl!, schema), file]);
  } finally {
    await withPostgresClient(postgresUrl!, (c) => c.query(`DROP SCHEMA ${schema} CASCADE`));
  }
}

/** The upsert floor (PostgreSQL) in a scratch schema of its own. */
async function upsertFloorRun(postgresUrl: string, full: string, incremental: string): Promise<LoadFigure> {
  const schema = `gex_bench_upsert_${process.pid}_${Date.now()}`;
  await withPostgresClient(postgresUrl, (c) => c.query(`CREATE SCHEMA ${schema}`));
  try {
    return await child(['postgres-upsert-floor', inSchema(postgresUrl, schema), full, incremental]);
  } finally {
    await withPostgresClient(postgresUrl, (c) => c.query(`DROP SCHEMA ${schema} CASCADE`));
  }
}

/**
 * Loads of `rows` rows × 10 columns on one backend, each in a fresh process: the database's own
 * bulk path (floor), gex's full load into a new table, and gex's incremental load with a primary
 * key into a table of `rows` rows where half the file's keys are new.
 */
export async function tableLoadComparison(
  backend: BackendFactory,
  rows: number,
  postgresUrl?: string,
): Promise<TableLoadComparison> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-table-bench-'));
  try {
    const full = path.join(dir, 'full.csv');
    const incremental = path.join(dir, 'incremental.csv');
    await writeBenchCsv(full, rows, 0, 'first');
    await writeBenchCsv(incremental, rows, Math.floor(rows / 2), 'second');
    const fileMb = Math.round((await stat(full)).size / 1048576);
    const floor = await floorRun(backend, postgresUrl, full, dir);
    const fullLoad = await withStore(await backend.fresh(), (location, projectId) =>
      child(['gex', location, String(projectId), full, JSON.stringify({ destination: TABLE })]),
    );
    const { fullWithKey, incrementalLoad, rowsAfterIncremental } = await withStore(
      await backend.fresh(),
      async (location, projectId) => {
        const fullWithKey = await child([
          'gex',
          location,
          String(projectId),
          full,
          JSON.stringify({ destination: TABLE, primary_key: ['id'] }),
        ]);
        const incrementalLoad = await child([
          'gex',
          location,
          String(projectId),
          incremental,
          JSON.stringify({ destination: TABLE, incremental: true, primary_key: ['id'] }),
        ]);
        return { fullWithKey, incrementalLoad, rowsAfterIncremental: await rowsCount(location, projectId) };
      },
    );
    const upsertFloor = backend.name === 'SQLite' ? undefined : await upsertFloorRun(postgresUrl!, full, incremental);
    const ratio = (figure: LoadFigure, to = floor) => Math.round((figure.ms / to.ms) * 100) / 100;
    return {
      store: backend.name,
      rows,
      fileMb,
      floor,
      full: fullLoad,
      fullWithKey,
      incremental: incrementalLoad,
      upsertFloor,
      fullRatio: ratio(fullLoad),
      incrementalRatio: ratio(incrementalLoad),
      upsertRatio: upsertFloor && ratio(incrementalLoad, upsertFloor),
      rowsAfterIncremental,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const verdict = (ok: boolean): string => (ok ? 'target met' : 'TARGET MISSED');

/** One line of the bench's table. */
export function describeComparison(r: TableLoadComparison): string[] {
  // target null: a ratio shown for scale only (a keyed upsert does more than one bare COPY)
  const figure = (name: string, f: LoadFigure, ratio?: number, target: number | null = 1.5) =>
    `  ${name.padEnd(22)} ${String(f.ms).padStart(7)} ms ${String(f.rowsPerSecond).padStart(8)} rows/s ${String(f.peakRssMb).padStart(5)} MB peak RSS` +
    (ratio === undefined ? '' : `  time / floor ${ratio.toFixed(2)}`) +
    (ratio === undefined || target === null ? '' : ` (${verdict(ratio <= target)}: <= ${target})`);
  const upsert =
    r.upsertFloor && r.upsertRatio !== undefined
      ? [
          figure('floor (stage + upsert)', r.upsertFloor),
          `  ${'gex incremental, key'.padEnd(22)} / the upsert floor: ${r.upsertRatio.toFixed(2)}` +
            ` (${verdict(r.upsertRatio <= 1.3)}: <= 1.3)`,
        ]
      : [];
  return [
    `${r.store} ${r.rows} rows × 10 columns (${r.fileMb} MB CSV):`,
    figure(r.store === 'SQLite' ? 'floor (prepared loop)' : 'floor (COPY FROM STDIN)', r.floor),
    figure('gex full load', r.full, r.fullRatio),
    figure('gex full load, key', r.fullWithKey, Math.round((r.fullWithKey.ms / r.floor.ms) * 100) / 100),
    figure('gex incremental, key', r.incremental, r.incrementalRatio, r.upsertFloor ? null : 1.5) +
      `  (${r.rowsAfterIncremental} rows after)`,
    ...upsert,
  ];
}
