import { SqliteDatabase } from '../../../src/store/sql/sqlite-database.js';
import { ProjectTables } from '../../../src/store/tables/index.js';

/**
 * Run by load-memory.test.ts in its own process (with a small --max-old-space-size), so that the
 * heap measured is this load's alone: loads argv[3] into the migrated SQLite store argv[2] as
 * project argv[4] and prints {rows, baseline, peak} as JSON.
 */
const [store, file, projectId] = process.argv.slice(2);
const db = new SqliteDatabase(store);
const baseline = process.memoryUsage().heapUsed;
let peak = baseline;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 20);
const started = Date.now();
const result = await new ProjectTables(db, Number(projectId)).load(file, { destination: 'in.c-big.rows' });
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage().heapUsed);
await db.close();
process.stdout.write(JSON.stringify({ rows: result.rowsInFile, baseline, peak, ms: Date.now() - started }));
