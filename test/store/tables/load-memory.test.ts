import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import type { EmbeddedBackend } from '../../../src/store/embedded/embedded-backend.js';
import { localToken } from '../../../src/store/embedded/tokens.js';
import { ProjectTables } from '../../../src/store/tables/index.js';
import { sqliteBackend } from '../../support/store.js';

const TARGET_BYTES = 200 * 1024 * 1024;
const MAX_HEAP_GROWTH = 100 * 1024 * 1024;

/** Writes a CSV of about `bytes` bytes (10 columns) without holding it in memory; returns its row count. */
async function writeCsv(file: string, bytes: number): Promise<number> {
  const out = createWriteStream(file);
  out.write('id,c1,c2,c3,c4,c5,c6,c7,c8,c9\n');
  let written = 0;
  let rows = 0;
  while (written < bytes) {
    let chunk = '';
    for (let i = 0; i < 5000; i++, rows++) chunk += `${rows},"alpha ${rows}",beta,gamma,"delta, with comma",epsilon,zeta,eta,theta,iota\n`;
    written += chunk.length;
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return rows;
}

describe('loading a large CSV file (SQLite)', function () {
  this.timeout(120_000);
  let backend: EmbeddedBackend;
  let dispose: () => Promise<void>;
  let dir: string;

  before(async () => {
    ({ backend, dispose } = await sqliteBackend.open());
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-tables-large-'));
  });
  after(async () => {
    await dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it('streams a 200 MB file: the heap grows by far less than the file', async () => {
    const file = path.join(dir, 'big.csv');
    const rows = await writeCsv(file, TARGET_BYTES);
    assert.ok((await stat(file)).size >= TARGET_BYTES);
    const tables = new ProjectTables(backend.db, (await localToken(backend.db, 'default')).projectId);
    const baseline = process.memoryUsage().heapUsed;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 20);
    const started = Date.now();
    try {
      const result = await tables.load(file, { destination: 'in.c-big.rows' });
      assert.equal(result.rowsInFile, rows);
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    console.log(`      ${rows} rows, ${Math.round(TARGET_BYTES / 1048576)} MB in ${Date.now() - started} ms; heap growth ${Math.round((peak - baseline) / 1048576)} MB`);
    assert.ok(peak - baseline < MAX_HEAP_GROWTH, `heap grew by ${peak - baseline} bytes`);
    assert.equal((await tables.table('in.c-big.rows')).rowsCount, rows);
  });
});
