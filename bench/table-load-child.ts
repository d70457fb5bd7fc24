/**
 * One measured load of the table-load bench, in a process of its own so that its peak RSS is the
 * load's alone. Prints {ms, rows, peakRssMb} as JSON.
 *
 *   node table-load-child.js gex STORE PROJECT_ID FILE MANIFEST_JSON
 *     gex's loader (ProjectTables.load) into the migrated store STORE (SQLite file or PostgreSQL URL)
 *   node table-load-child.js sqlite-floor SQLITE_FILE CSV_FILE
 *     the fastest plain SQLite loop: csv-parse, one prepared INSERT per row, one transaction
 *   node table-load-child.js postgres-floor URL CSV_FILE
 *     PostgreSQL's own bulk path: the file through COPY FROM STDIN into a plain table
 *   node table-load-child.js postgres-upsert-floor URL CSV_FILE INCREMENTAL_FILE
 *     the least an incremental load by key does on PostgreSQL, written directly with pg: a table
 *     with a unique key filled from CSV_FILE (not timed), then INCREMENTAL_FILE through COPY into
 *     a temporary stage and one INSERT … ON CONFLICT … DO UPDATE, in one transaction (timed, from
 *     the connection on)
 */
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import BetterSqlite3 from 'better-sqlite3';
import { parse } from 'csv-parse';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { openDatabase } from '../src/store/open-store.js';
import { ProjectTables } from '../src/store/tables/index.js';

const [mode, ...args] = process.argv.slice(2);

async function gex(store: string, projectId: string, file: string, manifest: string): Promise<number> {
  const db = await openDatabase(store);
  try {
    return (await new ProjectTables(db, Number(projectId)).load(file, JSON.parse(manifest))).rowsInFile;
  } finally {
    await db.close();
  }
}

async function sqliteFloor(location: string, file: string): Promise<number> {
  const db = new BetterSqlite3(location);
  db.pragma('journal_mode = WAL');
  const parser = createReadStream(file).pipe(parse({ bom: true }));
  let insert: BetterSqlite3.Statement | undefined;
  let rows = 0;
  db.exec('BEGIN');
  for await (const record of parser as AsyncIterable<string[]>) {
    if (!insert) {
      const columns = record.map((_, i) => `"c${i}" TEXT NOT NULL`);
      db.exec(`CREATE TABLE floor (${columns.join(', ')})`);
      insert = db.prepare(`INSERT INTO floor VALUES (${record.map(() => '?').join(', ')})`);
      continue;
    }
    insert.run(record);
    rows++;
  }
  db.exec('COMMIT');
  db.close();
  return rows;
}

async function postgresFloor(url: string, file: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const header = await firstLine(file);
    await client.query(`CREATE TABLE floor (${header.map((_, i) => `"c${i}" TEXT NOT NULL`).join(', ')})`);
    const copy = client.query(copyFrom(`COPY floor FROM STDIN (FORMAT csv, HEADER true)`));
    await pipeline(createReadStream(file), copy);
    return copy.rowCount;
  } finally {
    await client.end();
  }
}

async function postgresUpsertFloor(url: string, file: string, incremental: string): Promise<number> {
  const header = await firstLine(file);
  const columns = header.map((_, i) => `c${i}`);
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  try {
    const definitions = columns.map((c) => `${c} TEXT NOT NULL`).join(', ');
    await setup.query(`CREATE TABLE floor (${definitions}, ts TEXT NOT NULL DEFAULT '')`);
    const copy = setup.query(copyFrom(`COPY floor (${columns.join(', ')}) FROM STDIN (FORMAT csv, HEADER true)`));
    await pipeline(createReadStream(file), copy);
    // the state gex's incremental load meets: the table as one COPY and the key's index left it
    await setup.query('CREATE UNIQUE INDEX floor_key ON floor (c0)');
  } finally {
    await setup.end();
  }
  started = performance.now();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(`CREATE TEMPORARY TABLE stage (${columns.map((c) => `${c} TEXT NOT NULL`).join(', ')})`);
    const copy = client.query(copyFrom(`COPY stage FROM STDIN (FORMAT csv, HEADER true)`));
    await pipeline(createReadStream(incremental), copy);
    const updates = [...columns.slice(1), 'ts'].map((c) => `${c} = EXCLUDED.${c}`).join(', ');
    const merged = await client.query(
      `INSERT INTO floor SELECT *, $1 FROM stage ON CONFLICT (c0) DO UPDATE SET ${updates}`,
      [new Date().toISOString()],
    );
    await client.query('COMMIT');
    return merged.rowCount ?? 0;
  } finally {
    await client.end();
  }
}

async function firstLine(file: string): Promise<string[]> {
  for await (const record of createReadStream(file).pipe(parse({ bom: true, to_line: 1 })) as AsyncIterable<string[]>)
    return record;
  throw new Error(`${file} is empty`);
}

/** when the measured work starts (the upsert floor moves it past its setup) */
let started = performance.now();
const rows =
  mode === 'gex'
    ? await gex(args[0], args[1], args[2], args[3])
    : mode === 'sqlite-floor'
      ? await sqliteFloor(args[0], args[1])
      : mode === 'postgres-floor'
        ? await postgresFloor(args[0], args[1])
        : mode === 'postgres-upsert-floor'
          ? await postgresUpsertFloor(args[0], args[1], args[2])
          : Number.NaN;
if (Number.isNaN(rows)) throw new Error(`unknown mode ${mode}`);
const ms = performance.now() - started;
process.stdout.write(
  JSON.stringify({ ms: Math.round(ms), rows, peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024) }),
);
