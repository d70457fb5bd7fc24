import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../../src/common/errors.js';
import { silentLogger } from '../../src/common/logger.js';
import { DataFolder } from '../../src/extractor/data-folder.js';
import { OutputMapping } from '../../src/runner/output-mapping.js';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import { localToken } from '../../src/store/embedded/tokens.js';
import { ProjectTables } from '../../src/store/tables/index.js';
import { storeBackends } from '../support/store.js';

/**
 * The output mapping on files a component other than GE may write (GE never writes headless files
 * or delete_where): every manifest key reaches the loader, on a real SQLite file and PostgreSQL.
 */
for (const factory of storeBackends()) {
  describe(`output mapping of a row's out/tables (${factory.name})`, function () {
    this.timeout(60_000);
    let backend: EmbeddedBackend;
    let dispose: () => Promise<void>;
    let dir: string;
    let folder: DataFolder;
    let tables: ProjectTables;
    let mapping: OutputMapping;

    beforeEach(async () => {
      ({ backend, dispose } = await factory.open());
      dir = await mkdtemp(path.join(os.tmpdir(), 'gex-output-mapping-'));
      folder = new DataFolder(dir);
      await mkdir(folder.tablesDir, { recursive: true });
      tables = new ProjectTables(backend.db, (await localToken(backend.db, 'default')).projectId);
      mapping = new OutputMapping(tables, 'ex-generic-v2', '42');
    });
    afterEach(async () => {
      for (const b of await tables.listBuckets()) await tables.deleteBucket(b.id);
      await dispose();
      await rm(dir, { recursive: true, force: true });
    });

    async function table(name: string, csv: string, manifest?: unknown): Promise<void> {
      await writeFile(folder.tableFile(name), csv);
      if (manifest !== undefined)
        await writeFile(
          folder.tableFile(`${name}.manifest`),
          typeof manifest === 'string' ? manifest : JSON.stringify(manifest),
        );
    }
    const rows = async (id: string) => (await tables.preview(id, { limit: 1000 })).rows;

    it("loads a headless file with the manifest's columns, then delete_where before an incremental load", async () => {
      await table('events.csv', '"1","a"\n"2","b"\n"3","a"\n', {
        destination: 'in.c-ev.events',
        columns: ['id', 'kind'],
      });
      const [loaded] = await mapping.load(folder, ['events.csv'], silentLogger());
      assert.deepEqual(loaded, {
        file: 'events.csv',
        tableId: 'in.c-ev.events',
        rows: 3,
        incremental: false,
        primaryKey: [],
        reason: 'manifest',
      });
      assert.deepEqual(await rows('in.c-ev.events'), [
        ['1', 'a'],
        ['2', 'b'],
        ['3', 'a'],
      ]);

      await table('events.csv', '"id","kind"\n"4","a"\n', {
        destination: 'in.c-ev.events',
        incremental: true,
        delete_where_column: 'kind',
        delete_where_values: ['a'],
        delete_where_operator: 'eq',
      });
      await mapping.load(folder, ['events.csv'], silentLogger());
      assert.deepEqual(await rows('in.c-ev.events'), [
        ['2', 'b'],
        ['4', 'a'],
      ]);
    });

    it('a file without manifest or destination goes to the default bucket, named without .csv', async () => {
      await table('users.csv', '"id"\n"1"\n');
      await table('orders', '"id"\n"2"\n', { incremental: false, destination: null });
      const loaded = await mapping.load(folder, ['users.csv', 'orders'], silentLogger());
      assert.deepEqual(
        loaded.map((t) => t.tableId),
        ['in.c-ex-generic-v2-42.users', 'in.c-ex-generic-v2-42.orders'],
      );
      assert.deepEqual(await rows('in.c-ex-generic-v2-42.orders'), [['2']]);
    });

    it('a broken manifest or file is a user error naming the file; the table is left as it was', async () => {
      await table('t', '"id"\n"1"\n', { destination: 'in.c-b.t' });
      await mapping.load(folder, ['t'], silentLogger());
      const cases: Array<[string, unknown, RegExp]> = [
        ['"id"\n"9"\n', '{not json', /^Cannot load out\/tables\/t into the project: t\.manifest is not valid JSON/],
        [
          '"id"\n"9"\n',
          { destination: 'users' },
          /destination: users is not a table id of the form in\.c-<bucket>\.<table>/,
        ],
        ['"id"\n"9"\n"10","extra"\n', { destination: 'in.c-b.t' }, /t, line 3: 2 fields where the table has 1 columns/],
        ['"id"\n"9"\n', { destination: 'in.c-b.t', incremental: 'yes' }, /incremental must be true or false/],
      ];
      for (const [csv, manifest, pattern] of cases) {
        await table('t', csv, manifest);
        await assert.rejects(
          mapping.load(folder, ['t'], silentLogger()),
          (e: unknown) => e instanceof UserError && pattern.test(e.message),
        );
      }
      assert.deepEqual(await rows('in.c-b.t'), [['1']]);
      // a destination with SQL in its name is only a name: a table of that name, nothing dropped
      await table('t', '"id"\n"9"\n', { destination: 'in.c-b.t"; DROP TABLE x; --' });
      await mapping.load(folder, ['t'], silentLogger());
      assert.deepEqual((await tables.listTables()).map((t) => t.id).sort(), [
        'in.c-b.t',
        'in.c-b.t"; DROP TABLE x; --',
      ]);
      assert.deepEqual(await rows('in.c-b.t'), [['1']]);
    });
  });
}
