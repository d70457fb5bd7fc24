import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { fromPlain } from '../../src/json/index.js';
import { runGexInProcess } from '../support/in-process-gex.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { creatableRowId, plantRowIds } from '../support/planted-rows.js';

const KEY = '88'.repeat(32);
const C = 'ex-generic-v2';
/** `text` for a RegExp that matches it literally. */
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A row id that tries to print a line of its own and recolour the terminal. */
const HOSTILE_ID = 'x\n12:00:00.000 INFO    row users → /etc: \u001b[31mforged';

/**
 * Where a run's tables went: the report at the end of `gex run --config-id`, the default data
 * folder, and a data-folder rerun removing the tables of the run before (and nothing else).
 */
describe('gex run: where the tables go (CLI)', function () {
  this.timeout(60_000);
  let server: FixtureServer;
  let dir: string;

  before(async () => {
    // /api/users → 1,234 records; /api/orders → one
    server = await startFixtureServer({
      handler: (r) => {
        const url = new URL(r.url, 'http://x');
        if (url.pathname === '/api/users') return { body: Array.from({ length: 1234 }, (_, i) => ({ id: i })) };
        if (url.pathname === '/api/orders') return { body: [{ id: 1 }] };
        return undefined;
      },
    });
  });
  after(() => server.close());

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-output-folders-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const parameters = (...endpoints: string[]) => ({
    api: { baseUrl: `${server.url}/api/` },
    config: { outputBucket: 'b', jobs: endpoints.map((endpoint) => ({ endpoint })) },
  });

  async function storeConfiguration(storeFile: string, rowIds: string[]): Promise<string> {
    const backend = await openEmbeddedStore(storeFile, { GEX_MASTER_KEY: KEY });
    let configId: string;
    try {
      const store = await backend.localSession();
      const c = await store.createConfiguration(C, {
        name: 'where',
        configuration: fromPlain({ parameters: parameters() }),
      });
      for (const [i, rowId] of rowIds.entries()) {
        await store.createRow(C, c.id, {
          rowId: creatableRowId(rowId, i),
          configuration: fromPlain({ parameters: { config: { jobs: [{ endpoint: i === 0 ? 'users' : 'orders' }] } } }),
        });
      }
      configId = c.id;
    } finally {
      await backend.close();
    }
    plantRowIds(storeFile, configId, rowIds);
    return configId;
  }

  async function writeDataFolder(dataDir: string, ...endpoints: string[]): Promise<void> {
    await mkdir(dataDir, { recursive: true });
    await writeFile(path.join(dataDir, 'config.json'), JSON.stringify({ parameters: parameters(...endpoints) }));
  }

  describe('the report at the end of gex run --config-id', () => {
    it('names each row, its folder and its tables with row counts; a hostile row id stays one quoted token', async () => {
      const storeFile = path.join(dir, 'store.sqlite');
      const configId = await storeConfiguration(storeFile, ['users', HOSTILE_ID]);
      const dataDir = path.join(dir, 'data');
      const result = await runGexInProcess(
        ['run', '--config-id', configId, '--store', storeFile, '--data-dir', dataDir],
        {
          GEX_MASTER_KEY: KEY,
        },
      );
      assert.equal(result.code, 0, result.stderr);
      const lines = result.stdout.split('\n');
      const at = lines.findIndex((l) => l.endsWith(`INFO  Tables are in ${dataDir}:`));
      assert.ok(at >= 0, result.stdout);
      assert.match(
        lines[at + 1],
        /INFO {4}row users → rows\/users\/out\/tables: b\.users \(1,234 rows → in\.c-b\.users\)$/,
      );
      assert.match(
        lines[at + 2],
        /INFO {4}row "x\\n12:00:00\.000 INFO {4}row users → \/etc: \\u001b\[31mforged" → rows\/x%0A12%3A.*\/out\/tables: b\.orders \(1 row → in\.c-b\.orders\)$/,
      );
      assert.ok(!result.stdout.includes('\u001b'), 'no escape sequence reaches the terminal');
      assert.ok(
        !lines.some((l) => l.startsWith('12:00:00.000 INFO    row users → /etc')),
        'the forged line stays inside the quoted id',
      );
      assert.equal(lines.slice(at + 3).join(''), '', 'the report is the end of the output');
    });

    it('carries the report as fields in JSON lines', async () => {
      const storeFile = path.join(dir, 'store.sqlite');
      const configId = await storeConfiguration(storeFile, ['users', HOSTILE_ID]);
      const result = await runGexInProcess(
        [
          'run',
          '--config-id',
          configId,
          '--store',
          storeFile,
          '--data-dir',
          path.join(dir, 'data'),
          '--log-format',
          'json',
        ],
        { GEX_MASTER_KEY: KEY },
      );
      assert.equal(result.code, 0, result.stderr);
      const lines = result.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const rows = lines.filter((l) => Array.isArray(l.tables));
      assert.deepEqual(
        rows.map((l) => [l.rowId, l.folder, l.tables]),
        [
          ['users', 'rows/users', [{ file: 'b.users', rows: 1234, tableId: 'in.c-b.users' }]],
          [
            HOSTILE_ID,
            `rows/${encodeURIComponent(HOSTILE_ID).replace(/[.!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`,
            [{ file: 'b.orders', rows: 1, tableId: 'in.c-b.orders' }],
          ],
        ],
      );
    });
  });

  describe('the default data folder', () => {
    it('outside a container, a data-folder run without --data-dir uses ./data', async () => {
      await writeDataFolder(path.join(dir, 'data'), 'orders');
      const result = await runGexInProcess(['run'], { GEX_CONTAINER: '0', KBC_DATADIR: undefined }, { cwd: dir });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(await readFile(path.join(dir, 'data/out/tables/b.orders'), 'utf8'), '"id"\n"1"\n');
    });

    it('outside a container, a missing ./data is exit 1 saying what was looked for and how to point elsewhere', async () => {
      const result = await runGexInProcess(['run'], { GEX_CONTAINER: '0', KBC_DATADIR: undefined }, { cwd: dir });
      assert.equal(result.code, 1, result.stderr);
      assert.match(
        result.stderr,
        /No data folder: --data-dir was not given and \.\/data \(.*gex-output-folders-.*\/data\) does not exist\./,
      );
      assert.match(result.stderr, /point --data-dir \(or \$KBC_DATADIR\) at a folder with config\.json/);
      assert.ok(!existsSync(path.join(dir, 'data')), 'nothing was created');
    });

    it('inside a container an existing ./data wins, for a data-folder run and a --config-id run alike, and the log says why', async () => {
      await writeDataFolder(path.join(dir, 'data'), 'orders');
      const container = { GEX_CONTAINER: '1', KBC_DATADIR: undefined };
      const result = await runGexInProcess(['run'], container, { cwd: dir });
      assert.equal(result.code, 0, result.stderr);
      assert.match(
        result.stdout,
        new RegExp(
          `Data folder \\./data \\(${escape(path.join(dir, 'data'))}\\): --data-dir was not given and \\./data exists in the working folder`,
        ),
      );
      assert.equal(await readFile(path.join(dir, 'data/out/tables/b.orders'), 'utf8'), '"id"\n"1"\n');
      const storeFile = path.join(dir, 'store.sqlite');
      const configId = await storeConfiguration(storeFile, ['users']);
      const stored = await runGexInProcess(
        ['run', '--config-id', configId, '--store', storeFile],
        { ...container, GEX_MASTER_KEY: KEY },
        { cwd: dir },
      );
      assert.equal(stored.code, 0, stored.stderr);
      assert.match(
        stored.stdout,
        /Data folder \.\/data \(.*\): --data-dir was not given and \.\/data exists in the working folder/,
      );
      assert.ok(existsSync(path.join(dir, 'data/rows/users/out/tables/b.users')));
    });

    it('inside a container without ./data or /data: a data-folder run names both; a --config-id run makes ./data, never /data', async function () {
      if (existsSync('/data')) {
        console.warn('    skipped: /data exists on this machine, so inside a container gex rightly uses it');
        this.skip();
      }
      const container = { GEX_CONTAINER: '1', KBC_DATADIR: undefined };
      const result = await runGexInProcess(['run'], container, { cwd: dir });
      assert.equal(result.code, 1, result.stderr);
      assert.match(
        result.stderr,
        /No data folder: --data-dir was not given and neither \.\/data \(.*\/data\) nor \/data \(the data folder inside a container\) exists\./,
      );
      const storeFile = path.join(dir, 'store.sqlite');
      const configId = await storeConfiguration(storeFile, ['users']);
      const stored = await runGexInProcess(
        ['run', '--config-id', configId, '--store', storeFile],
        { ...container, GEX_MASTER_KEY: KEY },
        { cwd: dir },
      );
      assert.equal(stored.code, 0, stored.stderr);
      assert.match(
        stored.stdout,
        /Data folder \.\/data \(.*\): --data-dir was not given and there is neither \.\/data in the working folder nor \/data \(the data folder inside a container\); gex creates it/,
      );
      assert.ok(existsSync(path.join(dir, 'data/rows/users/out/tables/b.users')));
      assert.ok(!existsSync('/data'), 'no /data was created at the root');
    });

    it('outside a container, a --config-id run without --data-dir writes below ./data', async () => {
      const storeFile = path.join(dir, 'store.sqlite');
      const configId = await storeConfiguration(storeFile, ['users']);
      const result = await runGexInProcess(
        ['run', '--config-id', configId, '--store', storeFile],
        { GEX_MASTER_KEY: KEY, GEX_CONTAINER: '0', KBC_DATADIR: undefined },
        { cwd: dir },
      );
      assert.equal(result.code, 0, result.stderr);
      assert.ok(existsSync(path.join(dir, 'data/rows/users/out/tables/b.users')));
      assert.match(
        result.stdout,
        new RegExp(`Tables are in ${path.join(dir, 'data').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:`),
      );
    });
  });

  describe('a data-folder rerun', () => {
    it('removes the tables and manifests the previous run wrote, and nothing else', async () => {
      const dataDir = path.join(dir, 'data');
      await writeDataFolder(dataDir, 'users', 'orders');
      assert.equal((await runGexInProcess(['run', '--data-dir', dataDir])).code, 0);
      const tables = path.join(dataDir, 'out/tables');
      assert.deepEqual((await readdir(tables)).sort(), [
        'b.orders',
        'b.orders.manifest',
        'b.users',
        'b.users.manifest',
      ]);
      await writeFile(path.join(tables, 'mine.csv'), 'a user file\n');

      await writeDataFolder(dataDir, 'users');
      const result = await runGexInProcess(['run', '--data-dir', dataDir]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /Removed 4 files of the previous run from out\/tables/);
      assert.deepEqual((await readdir(tables)).sort(), ['b.users', 'b.users.manifest', 'mine.csv']);
    });

    it('never follows a symbolic link: a link planted in out/tables under a table name stays, and so does its target', async () => {
      const dataDir = path.join(dir, 'data');
      await writeDataFolder(dataDir, 'users', 'orders');
      assert.equal((await runGexInProcess(['run', '--data-dir', dataDir])).code, 0);
      const tables = path.join(dataDir, 'out/tables');
      // outside the data folder: a file and a folder with a file of a table's name
      const victim = path.join(dir, 'victim.txt');
      const victimDir = path.join(dir, 'victim-dir');
      await writeFile(victim, 'keep me\n');
      await mkdir(victimDir);
      await writeFile(path.join(victimDir, 'b.users'), 'keep me too\n');
      await rm(path.join(tables, 'b.orders'));
      await symlink(victim, path.join(tables, 'b.orders'));
      // a tampered record: names that climb out, absolute paths, a link to a folder
      await symlink(victimDir, path.join(tables, 'linked'));
      const record = path.join(dataDir, '.gex-tables.json');
      const recorded = JSON.parse(await readFile(record, 'utf8')) as { files: string[] };
      await writeFile(
        record,
        JSON.stringify({ files: [...recorded.files, '../../victim.txt', victim, 'linked', 'linked/b.users', '..'] }),
      );

      await writeDataFolder(dataDir, 'users');
      const result = await runGexInProcess(['run', '--data-dir', dataDir]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /Left b\.orders in out\/tables: it is a symbolic link, not a table gex wrote/);
      assert.equal(await readFile(victim, 'utf8'), 'keep me\n');
      assert.equal(await readFile(path.join(victimDir, 'b.users'), 'utf8'), 'keep me too\n');
      assert.deepEqual((await readdir(tables)).sort(), ['b.orders', 'b.users', 'b.users.manifest', 'linked']);
    });

    it('refuses the run when out/tables itself is a symbolic link: nothing removed or written there', async () => {
      const dataDir = path.join(dir, 'data');
      await writeDataFolder(dataDir, 'users');
      assert.equal((await runGexInProcess(['run', '--data-dir', dataDir])).code, 0);
      // out/tables replaced by a link to a folder outside holding a file of the recorded table's name
      const outside = path.join(dir, 'outside');
      await mkdir(outside);
      await writeFile(path.join(outside, 'b.users'), "not gex's\n");
      await rm(path.join(dataDir, 'out/tables'), { recursive: true });
      await symlink(outside, path.join(dataDir, 'out/tables'));
      await writeDataFolder(dataDir, 'orders');
      const result = await runGexInProcess(['run', '--data-dir', dataDir]);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /Refusing to use .*\/data\/out\/tables: it is a symbolic link/);
      assert.equal(await readFile(path.join(outside, 'b.users'), 'utf8'), "not gex's\n");
      assert.deepEqual(await readdir(outside), ['b.users'], 'no table was written through the link');
    });
  });
});
