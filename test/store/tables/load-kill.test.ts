import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { localToken } from '../../../src/store/embedded/tokens.js';
import { ProjectTables } from '../../../src/store/tables/index.js';
import { openEmbeddedStore } from '../../support/open-store.js';
import { storeBackends, TEST_KEY } from '../../support/store.js';

const CHILD = fileURLToPath(new URL('./load-kill-child.js', import.meta.url));
/** What the test feeds the loader before killing it: far more than any buffer between them. */
const FED_BYTES = 16 * 1024 * 1024;
const TABLE = 'in.c-kill.t';

/**
 * Feeds `fifo` a CSV (header id,v,extra, then rows) until FED_BYTES are written. The loader reads
 * the FIFO only as fast as it inserts rows, so writes completing are the evidence that the load
 * is in progress; the stream is left open, so the load cannot finish.
 */
async function feed(fifo: string): Promise<{ close(): void }> {
  const out = createWriteStream(fifo);
  out.on('error', () => undefined); // EPIPE once the reader is killed
  out.write('id,v,extra\n');
  let written = 0;
  for (let row = 0; written < FED_BYTES;) {
    let chunk = '';
    for (let i = 0; i < 2000; i++, row++) chunk += `${row},"value ${row}, new",extra ${row}\n`;
    written += chunk.length;
    if (!out.write(chunk)) await once(out, 'drain');
  }
  return { close: () => out.destroy() };
}

for (const factory of storeBackends()) {
  describe(`kill -9 during a table load (${factory.name})`, function () {
    this.timeout(120_000);

    for (const manifest of [{ destination: TABLE }, { destination: TABLE, incremental: true, primary_key: ['id'] }]) {
      it(`${manifest.incremental ? 'an incremental load with a key' : 'a full load'}: the table is exactly as before, the store opens and loads again`, async () => {
        const { backend, location, dispose } = await factory.open();
        const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-tables-kill-'));
        try {
          const projectId = (await localToken(backend.db, 'default')).projectId;
          const tables = new ProjectTables(backend.db, projectId);
          const seed = path.join(dir, 'seed.csv');
          await writeFile(seed, 'id,v\n1,a\n2,b\n3,"c, ""quoted"""\n');
          await tables.load(seed, { destination: TABLE, primary_key: ['id'] });
          const before = {
            detail: await tables.table(TABLE),
            rows: await tables.preview(TABLE),
            list: await tables.listTables(),
          };

          const fifo = path.join(dir, 'load.csv');
          await promisify(execFile)('mkfifo', [fifo]);
          const child = spawn(process.execPath, [CHILD, location, String(projectId), fifo, JSON.stringify(manifest)], {
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let output = '';
          child.stdout.on('data', (d) => (output += d));
          child.stderr.on('data', (d) => (output += d));
          const exited = once(child, 'exit');
          const feeding = await feed(fifo);
          assert.equal(child.exitCode, null, `the loader ended before it was killed: ${output}`);
          child.kill('SIGKILL');
          const [code, signal] = await exited;
          feeding.close();
          assert.deepEqual([code, signal], [null, 'SIGKILL']);

          assert.deepEqual(
            { detail: await tables.table(TABLE), rows: await tables.preview(TABLE), list: await tables.listTables() },
            before,
          );
          if (backend.db.dialect.name === 'postgres') {
            const stages = await backend.db.all(
              "SELECT relname FROM pg_class WHERE relname LIKE 'gex\\_stage\\_%' AND relpersistence = 't'",
            );
            assert.deepEqual(stages, [], 'no temporary stage left behind');
          }

          // a new process opens the store and loads into the same table
          const reopened = await openEmbeddedStore(location, TEST_KEY);
          try {
            const again = new ProjectTables(reopened.db, projectId);
            const next = path.join(dir, 'next.csv');
            await writeFile(next, 'id,v,extra\n2,B,x\n4,d,y\n');
            await again.load(next, { destination: TABLE, incremental: true });
            assert.deepEqual((await again.table(TABLE)).columns, ['id', 'v', 'extra']);
            const byId = new Map((await again.preview(TABLE)).rows.map((r) => [r[0], r]));
            assert.deepEqual([...byId.keys()].sort(), ['1', '2', '3', '4']);
            assert.deepEqual(byId.get('2'), ['2', 'B', 'x']);
          } finally {
            await reopened.close();
          }
        } finally {
          // bucket schemas on PostgreSQL live beside the store's schema: removed with the store
          const tables = new ProjectTables(backend.db, (await localToken(backend.db, 'default')).projectId);
          for (const b of await tables.listBuckets()) await tables.deleteBucket(b.id);
          await dispose();
          await rm(dir, { recursive: true, force: true });
        }
      });
    }
  });
}
