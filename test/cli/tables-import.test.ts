import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MAX_PREVIEW_ROWS, ProjectTables } from '../../src/store/tables/index.js';
import { describeEachBackend, useTestServer } from '../support/storage-api-server.js';
import { StoreCli } from '../support/store-cli.js';
import { TEST_KEY } from '../support/store.js';

/**
 * `gex tables import` and `gex tables export` work the same on the embedded store and against a
 * gex server (files and storage jobs): created, replaced, upserted by key, refused with the table
 * unchanged; an export larger than data-preview's 1000 rows whole.
 */
describeEachBackend('gex tables import and export', (backend) => {
  const server = useTestServer({ backend });
  let project = 0;

  for (const reach of ['embedded', 'served'] as const) {
    describe(reach, () => {
      let dir: string;
      let cli: StoreCli;
      let tables: ProjectTables;

      beforeEach(async () => {
        const name = `tables-import-${reach}-${++project}`;
        const token = await server().createToken({ project: name });
        const info = await server().backend.authenticate(token);
        tables = new ProjectTables(server().backend.db, info!.projectId);
        dir = await mkdtemp(path.join(os.tmpdir(), 'gex-tables-import-'));
        // the embedded store is the server's own, opened in the token's project
        cli = new StoreCli(
          reach === 'served'
            ? { KBC_URL: server().baseUrl, KBC_TOKEN: token, GEX_STORE: '' }
            : { ...TEST_KEY, GEX_STORE: server().location, KBC_TOKEN: token, KBC_URL: '' },
          dir,
        );
      });
      afterEach(async () => {
        for (const b of await tables.listBuckets()) await tables.deleteBucket(b.id);
        await rm(dir, { recursive: true, force: true });
      });

      const rows = async (tableId: string) => (await tables.preview(tableId, { limit: 100 })).rows;

      it('creates a table with its key, replaces it, and upserts by the key with --incremental', async () => {
        await writeFile(path.join(dir, 'a.csv'), 'id,name\n1,Ann\n2,"Bob ""B"""\n');
        const created = await cli.json([
          'tables',
          'import',
          'a.csv',
          '--table',
          'in.c-shop.users',
          '--primary-key',
          'id',
        ]);
        assert.deepEqual(created, { id: 'in.c-shop.users', rows: 2, created: true, columnsAdded: [] });
        assert.deepEqual((await tables.table('in.c-shop.users')).primaryKey, ['id']);

        await writeFile(path.join(dir, 'b.csv'), 'id,name,city\n2,Bobby,Brno\n3,Cid,Praha\n');
        const said = await cli.ok(['tables', 'import', 'b.csv', '--table', 'in.c-shop.users', '--incremental']);
        assert.match(said, /Loaded 2 rows into table "?in\.c-shop\.users"? \(incremental; new columns "?city"?\)/);
        assert.deepEqual((await rows('in.c-shop.users')).sort(), [
          ['1', 'Ann', ''],
          ['2', 'Bobby', 'Brno'],
          ['3', 'Cid', 'Praha'],
        ]);

        await cli.ok(['tables', 'import', 'b.csv', '--table', 'in.c-shop.users']);
        assert.equal((await rows('in.c-shop.users')).length, 2, 'a full load replaces the rows');
      });

      it("refuses a key that is not the table's, and a file that is not there; the table unchanged", async () => {
        await writeFile(path.join(dir, 'a.csv'), 'id,name\n1,Ann\n');
        await cli.ok(['tables', 'import', 'a.csv', '--table', 'in.c-shop.users', '--primary-key', 'id']);
        const refused = await cli.fails([
          'tables',
          'import',
          'a.csv',
          '--table',
          'in.c-shop.users',
          '--primary-key',
          'name',
          '--incremental',
        ]);
        assert.match(refused, /in\.c-shop\.users.*primary key|primary_key.*in\.c-shop\.users/);
        assert.deepEqual(await rows('in.c-shop.users'), [['1', 'Ann']]);
        assert.match(
          await cli.fails(['tables', 'import', 'missing.csv', '--table', 'in.c-shop.users']),
          /missing\.csv does not exist/,
        );
      });

      it(`exports a table of more than ${MAX_PREVIEW_ROWS} rows whole, streamed`, async () => {
        const n = MAX_PREVIEW_ROWS + 500;
        const lines = ['id,name'];
        for (let i = 1; i <= n; i++) lines.push(`${i},"name ${i}, with ""quotes"""`);
        await writeFile(path.join(dir, 'big.csv'), `${lines.join('\n')}\n`);
        await cli.ok(['tables', 'import', 'big.csv', '--table', 'in.c-shop.big']);
        const said = await cli.ok(['tables', 'export', 'in.c-shop.big', '--output', 'out.csv']);
        assert.match(said, new RegExp(`Exported ${n.toLocaleString('en-US').replace(/,/g, ',?')} rows`));
        const text = await readFile(path.join(dir, 'out.csv'), 'utf8');
        const out = text.trim().split('\n');
        assert.equal(out.length, n + 1);
        assert.equal(out[0], '"id","name"');
        assert.equal(out[n], `"${n}","name ${n}, with ""quotes"""`);
        const manifest = JSON.parse(await readFile(path.join(dir, 'out.csv.manifest'), 'utf8')) as { id: string };
        assert.equal(manifest.id, 'in.c-shop.big');
      });
    });
  }
});
