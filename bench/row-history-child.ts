/**
 * One measured import of the row-history bench, in a process of its own so that a slow store can
 * be stopped at a deadline. Prints one JSON object (RowHistoryFigure without `finished`).
 *
 *   node row-history-child.js DIR ROWS [update]
 *     imports a configuration of ROWS rows into a new SQLite store in DIR (`gex configs import`'s
 *     path); with `update`, then changes one row and reports the bytes that change stored
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { fromPlain } from '../src/json/index.js';
import { importConfiguration } from '../src/store/import-configuration.js';
import { openEmbeddedStore } from '../test/support/open-store.js';

const C = 'ex-generic-v2';
const KEY = { GEX_MASTER_KEY: '55'.repeat(32) };
const [dir, rowsArg, update] = process.argv.slice(2);
const rows = Number(rowsArg);

/** Bytes of data stored in the SQLite file (cells of every table and index), not its page count. */
function payloadBytes(file: string): number {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return Number((db.prepare('SELECT sum(payload) AS bytes FROM dbstat').get() as { bytes: number }).bytes);
  } finally {
    db.close();
  }
}

async function sizeOf(file: string): Promise<number> {
  return (await stat(file).catch(() => ({ size: 0 }))).size;
}

const file = path.join(dir, 'store.sqlite');
const document = fromPlain({
  name: `${rows} rows`,
  configurationId: 'many-rows',
  configuration: { parameters: { api: { baseUrl: 'https://api.example.com/' } } },
  rows: Array.from({ length: rows }, (_, i) => ({
    name: `row ${i}`,
    configuration: { parameters: { config: { jobs: [{ endpoint: `resource/${i}` }] } } },
  })),
});
const backend = await openEmbeddedStore(file, KEY);
const store = await backend.localSession();
const started = performance.now();
const imported = await importConfiguration(store, C, document);
const importMs = Math.round(performance.now() - started);
const walBytes = await sizeOf(`${file}-wal`);
await backend.close();
const storeBytes = await sizeOf(file);
const storedBytes = payloadBytes(file);
let rowUpdateBytes: number | undefined;
if (update === 'update') {
  const again = await openEmbeddedStore(file, KEY);
  const session = await again.localSession();
  const before = payloadBytes(file);
  await session.updateRow(C, imported.id, imported.rows[0].id, {
    configuration: fromPlain({ parameters: { config: { jobs: [{ endpoint: 'changed' }] } } }),
  });
  await again.close();
  rowUpdateBytes = payloadBytes(file) - before;
}
const reopened = await openEmbeddedStore(file, KEY);
const versions = (await (await reopened.localSession()).listConfigurationVersions(C, imported.id, { limit: 1 }))[0]
  .version;
await reopened.close();
process.stdout.write(JSON.stringify({ rows, importMs, versions, storeBytes, walBytes, storedBytes, rowUpdateBytes }));
