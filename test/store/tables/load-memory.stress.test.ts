import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
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
const HEAP_LIMIT_MB = 160;
const CHILD = fileURLToPath(new URL('./load-memory-child.js', import.meta.url));
const run = promisify(execFile);

/** Writes a CSV of about `bytes` bytes (10 columns) without holding it in memory; returns its row count. */
async function writeCsv(file: string, bytes: number): Promise<number> {
  const out = createWriteStream(file);
  out.write('id,c1,c2,c3,c4,c5,c6,c7,c8,c9\n');
  let written = 0;
  let rows = 0;
  while (written < bytes) {
    let chunk = '';
    for (let i = 0; i < 5000; i++, rows++)
      chunk += `${rows},"alpha ${rows}",beta,gamma,"delta, with comma",epsilon,zeta,eta,theta,iota\n`;
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
  let location: string;
  let dir: string;

  before(async () => {
    ({ backend, dispose, location } = await sqliteBackend.open());
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
    const projectId = (await localToken(backend.db, 'default')).projectId;
    // a process of its own, whose heap holds this load alone; the heap limit makes a load that
    // kept the file in memory fail even if sampling missed its peak
    const { stdout } = await run(
      process.execPath,
      [`--max-old-space-size=${HEAP_LIMIT_MB}`, CHILD, location, file, String(projectId)],
      { maxBuffer: 1024 * 1024 },
    );
    const measured = JSON.parse(stdout) as { rows: number; baseline: number; peak: number; ms: number };
    console.log(
      `      ${rows} rows, ${Math.round(TARGET_BYTES / 1048576)} MB in ${measured.ms} ms; heap growth ${Math.round((measured.peak - measured.baseline) / 1048576)} MB`,
    );
    assert.equal(measured.rows, rows);
    assert.ok(
      measured.peak - measured.baseline < MAX_HEAP_GROWTH,
      `heap grew by ${measured.peak - measured.baseline} bytes`,
    );
    const tables = new ProjectTables(backend.db, projectId);
    assert.equal((await tables.table('in.c-big.rows')).rowsCount, rows);
  });
});
