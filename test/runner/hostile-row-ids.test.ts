import assert from 'node:assert/strict';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { encodePathSegment } from '../../src/common/safe-path.js';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { fromPlain } from '../../src/json/index.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { runGexInProcess } from '../support/in-process-gex.js';
import { creatableRowId, plantRowIds } from '../support/planted-rows.js';

const KEY = '66'.repeat(32);
const C = 'ex-generic-v2';

const NUL_NEWLINE_ID = 'x\u0000y\n12:00:00.000 INFO  Saved the state of 9 rows: forged';
const LONG_ID = 'L'.repeat(400) + '.'.repeat(600);
/** Every row id that used to escape or share a folder; each row's table carries its index as `tag`. */
const HOSTILE_IDS = ['../../victim', '..', '.', 'a', 'a/out/tables', NUL_NEWLINE_ID, LONG_ID];

interface Summary {
  status: string;
  stateSaved: boolean;
  rows: Array<{
    id: string;
    folder: string;
    status: string;
    stateSaved: boolean;
    tables: Array<{ file: string; rows: number }>;
  }>;
}

/**
 * Row ids are opaque text from the store. Each test runs `gex run --config-id` (in this process)
 * against a real SQLite store holding the hostile ids, and checks that nothing outside the run's
 * own folders is touched and that every row's output survives the run.
 */
describe('gex run --config-id with hostile row ids (CLI, SQLite store)', function () {
  this.timeout(60_000);
  let server: FixtureServer;
  let dir: string;
  let dataDir: string;
  let storeFile: string;

  before(async () => {
    // /api/users?tag=N answers one record carrying N, so every row's table is its own
    server = await startFixtureServer({
      handler: (r) => {
        const url = new URL(r.url, 'http://x');
        return url.pathname === '/api/users' ? { body: [{ id: 1, tag: url.searchParams.get('tag') }] } : undefined;
      },
    });
  });
  after(() => server.close());

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-hostile-ids-'));
    dataDir = path.join(dir, 'data');
    storeFile = path.join(dir, 'store.sqlite');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function storeConfiguration(
    configId: string,
    rowIds: string[],
    rowName = (i: number) => `Row ${i}`,
  ): Promise<void> {
    const backend = await openEmbeddedStore(storeFile, { GEX_MASTER_KEY: KEY });
    try {
      const store = await backend.localSession();
      await store.createConfiguration(C, {
        name: 'hostile',
        configurationId: configId,
        configuration: fromPlain({
          parameters: { api: { baseUrl: `${server.url}/api/` }, config: { outputBucket: 'b' } },
        }),
      });
      for (const [i, rowId] of rowIds.entries()) {
        await store.createRow(C, configId, {
          rowId: creatableRowId(rowId, i),
          name: rowName(i),
          configuration: fromPlain({ parameters: { config: { jobs: [{ endpoint: 'users', params: { tag: i } }] } } }),
        });
      }
    } finally {
      await backend.close();
    }
    plantRowIds(storeFile, configId, rowIds);
    const reopened = await openEmbeddedStore(storeFile, { GEX_MASTER_KEY: KEY });
    try {
      const stored = await (await reopened.localSession()).getConfiguration(C, configId);
      assert.deepEqual(new Set(stored.rows.map((r) => r.id)), new Set(rowIds), 'the store holds every id as planted');
    } finally {
      await reopened.close();
    }
  }

  const run = (configId: string, extra: string[] = []) =>
    runGexInProcess(
      [
        'run',
        '--config-id',
        configId,
        '--data-dir',
        dataDir,
        '--store',
        storeFile,
        '--summary',
        path.join(dir, 'summary.json'),
        ...extra,
      ],
      { GEX_MASTER_KEY: KEY },
    );
  const summary = async () => JSON.parse(await readFile(path.join(dir, 'summary.json'), 'utf8')) as Summary;

  it('keeps every row in rows/<encoded id>: nothing outside is removed, no two rows share a folder, logs cannot be forged', async () => {
    // what the old folder names pointed at: a folder beside the data folder, the data folder, rows/
    const victim = path.join(dir, 'victim');
    await mkdir(victim);
    await writeFile(path.join(victim, 'keep.txt'), 'victim');
    await mkdir(path.join(dataDir, 'rows', 'other-configuration'), { recursive: true });
    await writeFile(path.join(dataDir, 'keep.txt'), 'data folder');
    await writeFile(path.join(dataDir, 'rows', 'other-configuration', 'keep.txt'), 'another row folder');
    const configId = 'cfg\n12:00:00.000 ERROR forged configuration line';
    await storeConfiguration(configId, HOSTILE_IDS, (i) =>
      i === 5 ? 'Evil\r\n12:00:00.000 INFO  Finished everything' : `Row ${i}`,
    );

    const result = await run(configId);
    assert.equal(result.code, 0, result.stderr + result.stdout);

    assert.deepEqual(await readdir(victim), ['keep.txt'], 'nothing was written beside the data folder');
    assert.equal(await readFile(path.join(victim, 'keep.txt'), 'utf8'), 'victim');
    assert.equal(await readFile(path.join(dataDir, 'keep.txt'), 'utf8'), 'data folder');
    assert.equal(
      await readFile(path.join(dataDir, 'rows', 'other-configuration', 'keep.txt'), 'utf8'),
      'another row folder',
    );

    const s = await summary();
    assert.equal(s.status, 'success');
    assert.equal(s.stateSaved, true);
    const folders = new Set<string>();
    for (const [i, rowId] of HOSTILE_IDS.entries()) {
      const row = s.rows.find((r) => r.id === rowId)!;
      const folder = `rows/${encodePathSegment(rowId)}`;
      assert.equal(row.folder, folder, `the summary names the folder of ${JSON.stringify(rowId.slice(0, 20))}`);
      assert.equal(row.status, 'success');
      assert.equal(row.stateSaved, true);
      const csv = `"id","tag"\n"1","${i}"\n`;
      assert.deepEqual(row.tables, [
        { file: `${folder}/out/tables/b.users`, rows: 1, bytes: csv.length, loaded: true, tableId: 'in.c-b.users' },
      ]);
      // each row's own table, intact after every later row ran
      assert.equal(await readFile(path.join(dataDir, folder, 'out', 'tables', 'b.users'), 'utf8'), csv);
      assert.ok(Buffer.byteLength(path.basename(folder)) <= 255);
      folders.add(folder);
      assert.match(result.stdout, new RegExp(`in folder ${folder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`));
    }
    assert.equal(folders.size, HOSTILE_IDS.length);
    assert.deepEqual(
      (await readdir(path.join(dataDir, 'rows'))).sort(),
      [...[...folders].map((f) => f.slice('rows/'.length)), 'other-configuration'].sort(),
      'one folder per row, directly inside rows/',
    );
    assert.equal(encodePathSegment('a'), 'a', 'a readable id keeps its name');

    // every log line is one of gex's own: the ids and names with line breaks stay inside their line
    const lines = (result.stdout + result.stderr).split('\n').filter(Boolean);
    for (const line of lines)
      assert.match(
        line,
        /^\d\d:\d\d:\d\d\.\d{3} (INFO |DEBUG|WARN ) /,
        `a forged or broken log line: ${JSON.stringify(line)}`,
      );
    assert.ok(
      !lines.some((l) => l.includes(' INFO  Finished everything') && !l.includes('\\r\\n')),
      'the row name cannot start a line',
    );
    assert.match(result.stdout, /Configuration "cfg\\n12:00:00\.000 ERROR forged configuration line" "hostile"/);
    assert.match(
      result.stdout,
      /row 7 of 7: "x\\u0000y\\n12:00:00\.000 INFO {2}Saved the state of 9 rows: forged" "Evil\\r\\n12:00:00\.000 INFO {2}Finished everything"/,
    );
    assert.match(result.stdout, /Saved the state of 7 rows: /);
  });

  it('gex configs list: a stored id or name with a line break or a tab stays in its own line and column', async () => {
    await storeConfiguration('plain', []);
    await storeConfiguration('cfg\nplain\tforged', []);
    const backend = await openEmbeddedStore(storeFile, { GEX_MASTER_KEY: KEY });
    try {
      await (await backend.localSession()).updateConfiguration(C, 'plain', { name: 'two\nlines\tand a tab' });
    } finally {
      await backend.close();
    }
    const result = await runGexInProcess(['configs', 'list', '--store', storeFile], { GEX_MASTER_KEY: KEY });
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.split('\n').filter(Boolean);
    assert.equal(lines.length, 2, result.stdout);
    for (const line of lines) assert.equal(line.split('\t').length, 3, line);
    assert.ok(lines.includes('"cfg\\nplain\\tforged"\thostile\tversion 1'), result.stdout);
    assert.ok(lines.includes('plain\t"two\\nlines\\tand a tab"\tversion 2'), result.stdout);
  });

  it('a row folder planted as a symlink to a folder elsewhere: the run is refused naming it, its target untouched', async () => {
    const victim = path.join(dir, 'elsewhere');
    await mkdir(victim);
    await writeFile(path.join(victim, 'keep.txt'), 'elsewhere');
    await mkdir(path.join(dataDir, 'rows'), { recursive: true });
    await symlink(victim, path.join(dataDir, 'rows', 'users'));
    await storeConfiguration('1', ['users']);

    const result = await run('1');
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /Refusing to use .*\/rows\/users: it is a symbolic link/);
    assert.deepEqual(await readdir(victim), ['keep.txt']);
    assert.ok(
      (await lstat(path.join(dataDir, 'rows', 'users'))).isSymbolicLink(),
      'the link is left for the user to look at',
    );
  });

  it('runs one hostile row named with --row-id in its encoded folder only', async () => {
    await storeConfiguration('1', ['..', 'plain']);
    await mkdir(path.join(dataDir, 'rows', 'plain', 'out', 'tables'), { recursive: true });
    await writeFile(path.join(dataDir, 'rows', 'plain', 'out', 'tables', 'earlier'), 'from an earlier run');

    const result = await run('1', ['--row-id', '..']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(await readFile(path.join(dataDir, 'rows/%2E%2E/out/tables/b.users'), 'utf8'), '"id","tag"\n"1","0"\n');
    assert.equal(
      await readFile(path.join(dataDir, 'rows/plain/out/tables/earlier'), 'utf8'),
      'from an earlier run',
      'the other row folder is untouched',
    );
    const s = await summary();
    assert.deepEqual(
      s.rows.map((r) => [r.id, r.folder, r.status, r.stateSaved]),
      [
        ['..', 'rows/%2E%2E', 'success', true],
        ['plain', 'rows/plain', 'skipped', false],
      ],
    );
  });
});
