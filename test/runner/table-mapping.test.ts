import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { fromPlain, toPlain } from '../../src/json/index.js';
import type { CliResult } from '../support/cli.js';
import { runGexInProcess } from '../support/in-process-gex.js';
import { openConfigStore } from '../support/open-store.js';
import type { EmbeddedOpenedStore } from '../../src/store/open-config-store.js';
import { describeEachBackend, TestServer } from '../support/storage-api-server.js';
import type { FastifyInstance } from 'fastify';
import { silentLogger } from '../../src/common/logger.js';
import { JobPlatform } from '../../src/jobs/job-platform.js';
import { buildServer } from '../../src/server/app.js';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import { openEmbeddedStore } from '../support/open-store.js';
import type { BackendFactory, FreshStore } from '../support/store.js';

const KEY = { GEX_MASTER_KEY: '77'.repeat(32) };
const C = 'ex-generic-v2';

interface Summary {
  status: string;
  stateSaved: boolean;
  rows: Array<{
    id: string | null;
    status: string;
    tables: Array<{ file: string; rows: number; bytes: number; loaded: boolean; tableId?: string }>;
    inputTables?: Array<{ source: string; file: string; rows: number; bytes: number }>;
  }>;
}

/**
 * Keboola's output and input mapping through real `gex run --config-id` processes on a real store
 * (a SQLite file; PostgreSQL with GEX_TEST_POSTGRES): each row's tables land in the project before
 * the next row starts, and a row reads an earlier row's table from in/tables.
 */
/**
 * How a run reaches the store: `embedded` opens it (--store <file or URL>); `served` runs against a
 * gex server on it (--store <http URL> --token), loading through files and import jobs — every
 * test below holds for both.
 */
type Reach = 'embedded' | 'served';

for (const reach of ['embedded', 'served'] as const)
  describeEachBackend(`gex run loads tables into the project (${reach})`, (factory) =>
    tableMappingSuite(factory, reach),
  );

function tableMappingSuite(factory: BackendFactory, reach: Reach): void {
  let server: FixtureServer;
  /** what /api/<name> answers (a JSON list); a name not here is a 404 */
  let answers: Record<string, unknown[]>;
  let dir: string;
  let dataDir: string;
  let store: FreshStore;
  /** the gex server on the store when `reach` is served */
  let served:
    { app: FastifyInstance; backend: EmbeddedBackend; platform: JobPlatform; url: string; token: string } | undefined;

  before(async () => {
    server = await startFixtureServer({
      handler: (r) => {
        const name = new URL(r.url, 'http://x').pathname.replace('/api/', '');
        return name in answers ? { body: answers[name] } : undefined;
      },
    });
  });
  after(() => server.close());

  beforeEach(async function () {
    this.timeout(60_000);
    answers = {};
    server.requests.length = 0;
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-table-mapping-'));
    dataDir = path.join(dir, 'data');
    store = await factory.fresh();
    if (reach === 'served') {
      const backend = await openEmbeddedStore(store.location, KEY);
      // the project the embedded store's commands use without a token
      const { token } = await backend.createToken({ description: 'runner', project: 'default' });
      // its storage jobs load and export the run's tables
      const platform = await JobPlatform.open(backend, { logger: silentLogger(), storageJobs: {} });
      await platform.start();
      const app = await buildServer({ backend, ...platform.served });
      served = { app, backend, platform, token, url: await app.listen({ port: 0, host: '127.0.0.1' }) };
    }
  });
  afterEach(async function () {
    this.timeout(60_000);
    if (served) {
      await served.app.close();
      await served.platform.stop();
      await served.backend.close();
      served = undefined;
    }
    // PostgreSQL bucket schemas live beside the store's schema: drop them with the store
    await withStore(async (opened) => {
      for (const b of await opened.tables.listBuckets()) await opened.tables.deleteBucket(b.id);
    });
    await store.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  async function withStore<T>(work: (opened: EmbeddedOpenedStore) => Promise<T>): Promise<T> {
    const opened = await openConfigStore(store.location, { env: KEY });
    try {
      assert.notEqual(opened.kind, 'remote', 'the embedded store');
      return await work(opened as EmbeddedOpenedStore);
    } finally {
      await opened.close();
    }
  }

  /** A configuration `id` with `config` under parameters.config and rows `[rowId, parameters.config, storage?]`. */
  async function configure(
    id: string,
    config: Record<string, unknown>,
    rows: Array<[string, Record<string, unknown>, Record<string, unknown>?]> = [],
  ): Promise<void> {
    await withStore(async ({ store: s }) => {
      await s.createConfiguration(C, {
        name: id,
        configurationId: id,
        configuration: fromPlain({ parameters: { api: { baseUrl: `${server.url}/api/` }, config } }),
      });
      for (const [rowId, rowConfig, storage] of rows) {
        await s.createRow(C, id, {
          rowId,
          name: rowId,
          configuration: fromPlain({ parameters: { config: rowConfig }, ...(storage ? { storage } : {}) }),
        });
      }
    });
  }

  const run = (id: string, extra: string[] = []): Promise<CliResult> =>
    runGexInProcess(
      [
        'run',
        '--config-id',
        id,
        '--data-dir',
        dataDir,
        ...(served ? ['--store', served.url, '--token', served.token] : ['--store', store.location]),
        '--summary',
        path.join(dir, 'summary.json'),
        ...extra,
      ],
      // a runner against a server holds only the token (a master key there is refused)
      served ? { GEX_MASTER_KEY: '' } : KEY,
    );
  const summary = async () => JSON.parse(await readFile(path.join(dir, 'summary.json'), 'utf8')) as Summary;
  const rowsOf = (tableId: string) =>
    withStore(async ({ tables }) => (await tables.preview(tableId, { limit: 1000 })).rows);
  const tableIds = () => withStore(async ({ tables }) => (await tables.listTables()).map((t) => t.id));
  const stateOf = (id: string) => withStore(async ({ store: s }) => toPlain((await s.getConfiguration(C, id)).state));

  it('full load into the default bucket in.c-<component>-<config>: a second run replaces the rows', async function () {
    this.timeout(60_000);
    await configure('shop', { jobs: [{ endpoint: 'users' }] });
    answers.users = [
      { id: 1, name: 'Ann' },
      { id: 2, name: 'Bob' },
    ];
    const first = await run('shop');
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.match(first.stdout, /Loaded table in\.c-ex-generic-v2-shop\.users: 2 rows \(full load\)/);
    assert.match(first.stdout, /users \(2 rows → in\.c-ex-generic-v2-shop\.users\)/);
    assert.deepEqual(await rowsOf('in.c-ex-generic-v2-shop.users'), [
      ['1', 'Ann'],
      ['2', 'Bob'],
    ]);
    const csv = '"id","name"\n"1","Ann"\n"2","Bob"\n';
    assert.deepEqual((await summary()).rows[0].tables, [
      { file: 'out/tables/users', rows: 2, bytes: csv.length, loaded: true, tableId: 'in.c-ex-generic-v2-shop.users' },
    ]);
    // the files are still there, as before
    assert.equal(await readFile(path.join(dataDir, 'out/tables/users'), 'utf8'), csv);

    answers.users = [{ id: 3, name: 'Cid' }];
    assert.equal((await run('shop')).code, 0);
    assert.deepEqual(await rowsOf('in.c-ex-generic-v2-shop.users'), [['3', 'Cid']]);
  });

  it('incremental with a primary key upserts by the key across two runs; new columns are added', async function () {
    this.timeout(60_000);
    const mapping = (columns: string[]) =>
      Object.fromEntries(
        columns.map((c) => [c, { mapping: { destination: c, ...(c === 'id' ? { primaryKey: true } : {}) } }]),
      );
    await configure('inc', {
      outputBucket: 'shop',
      incrementalOutput: true,
      jobs: [{ endpoint: 'users' }],
      mappings: { users: mapping(['id', 'name']) },
    });
    answers.users = [
      { id: 1, name: 'Ann' },
      { id: 2, name: 'Bob' },
    ];
    const first = await run('inc');
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.match(first.stdout, /Loaded table in\.c-shop\.users: 2 rows \(incremental, key id\)/);

    await withStore(({ store: s }) =>
      s.updateConfiguration(C, 'inc', {
        configuration: fromPlain({
          parameters: {
            api: { baseUrl: `${server.url}/api/` },
            config: {
              outputBucket: 'shop',
              incrementalOutput: true,
              jobs: [{ endpoint: 'users' }],
              mappings: { users: mapping(['id', 'name', 'city']) },
            },
          },
        }),
      }),
    );
    answers.users = [
      { id: 2, name: 'Bobby', city: 'Brno' },
      { id: 3, name: 'Cid', city: 'Praha' },
    ];
    const second = await run('inc');
    assert.equal(second.code, 0, second.stdout + second.stderr);
    assert.match(second.stdout, /Loaded table in\.c-shop\.users: 2 rows \(incremental, key id\), new column city/);
    const byId = new Map((await rowsOf('in.c-shop.users')).map((r) => [r[0], r]));
    assert.deepEqual([...byId.keys()].sort(), ['1', '2', '3']);
    assert.deepEqual(byId.get('1'), ['1', 'Ann', ''], 'the old row gets an empty new column');
    assert.deepEqual(byId.get('2'), ['2', 'Bobby', 'Brno'], 'the key was upserted');
    assert.deepEqual(await withStore(async ({ tables }) => (await tables.table('in.c-shop.users')).primaryKey), ['id']);
  });

  it("row 2 reads row 1's table by input mapping: row 1's outputs are loaded before row 2 starts", async function () {
    this.timeout(60_000);
    await configure('pipe', { outputBucket: 'shop' }, [
      ['a-users', { jobs: [{ endpoint: 'users' }] }],
      [
        'b-report',
        { jobs: [{ endpoint: 'report' }] },
        {
          input: {
            tables: [
              {
                source: 'in.c-shop.users',
                destination: 'users.csv',
                columns: ['name'],
                where_column: 'id',
                where_values: ['2'],
              },
              { source: 'in.c-shop.users' },
            ],
          },
        },
      ],
    ]);
    answers.users = [
      { id: 1, name: 'Ann' },
      { id: 2, name: 'B "quoted", too' },
    ];
    answers.report = [{ ok: 1 }];
    const result = await run('pipe');
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const folder = path.join(dataDir, 'rows/b-report/in/tables');
    const filtered = '"name"\n"B ""quoted"", too"\n';
    const whole = '"id","name"\n"1","Ann"\n"2","B ""quoted"", too"\n';
    assert.equal(await readFile(path.join(folder, 'users.csv'), 'utf8'), filtered);
    // no destination: the file is named as the source table (Keboola adds no .csv)
    assert.equal(await readFile(path.join(folder, 'in.c-shop.users'), 'utf8'), whole);
    const manifest = JSON.parse(await readFile(path.join(folder, 'users.csv.manifest'), 'utf8')) as Record<
      string,
      unknown
    >;
    assert.equal(manifest.id, 'in.c-shop.users');
    assert.equal(manifest.name, 'users');
    assert.deepEqual(manifest.columns, ['name']);
    assert.equal(manifest.rows_count, 2);
    assert.deepEqual(manifest.primary_key, []);
    assert.match(String(manifest.last_import_date), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$/);
    assert.deepEqual((await summary()).rows[1].inputTables, [
      { source: 'in.c-shop.users', file: 'rows/b-report/in/tables/users.csv', rows: 1, bytes: filtered.length },
      { source: 'in.c-shop.users', file: 'rows/b-report/in/tables/in.c-shop.users', rows: 2, bytes: whole.length },
    ]);
    assert.deepEqual((await tableIds()).sort(), ['in.c-shop.report', 'in.c-shop.users']);
  });

  it("an API of bounding boxes and fields PostgreSQL reserves loads under the user's names; an input mapping since long ago or until far ahead reads the right rows", async function () {
    this.timeout(60_000);
    const fields = ['xmin', 'ymin', 'xmax', 'ymax', 'ctid', 'tableoid', 'cmin', 'cmax', 'oid'];
    await configure('boxes', { outputBucket: 'geo' }, [
      ['a-boxes', { jobs: [{ endpoint: 'boxes' }] }],
      [
        'b-read',
        { jobs: [{ endpoint: 'report' }] },
        {
          input: {
            tables: [
              {
                source: 'in.c-geo.boxes',
                destination: 'long-ago.csv',
                columns: ['xmin', 'ctid'],
                changed_since: '-999999999 weeks',
              },
              {
                source: 'in.c-geo.boxes',
                destination: 'far-ahead.csv',
                columns: ['xmin'],
                changed_since: '999999999999',
              },
              {
                source: 'in.c-geo.boxes',
                destination: 'nul.csv',
                columns: ['xmin'],
                where_column: 'tableoid',
                where_values: ['\u0000'],
                where_operator: 'ne',
              },
            ],
          },
        },
      ],
    ]);
    answers.boxes = [
      Object.fromEntries(fields.map((f, i) => [f, i])),
      Object.fromEntries(fields.map((f, i) => [f, i + 10])),
    ];
    answers.report = [{ ok: 1 }];
    const result = await run('boxes');
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /Loaded table in\.c-geo\.boxes: 2 rows/);
    assert.deepEqual(await withStore(async ({ tables }) => (await tables.table('in.c-geo.boxes')).columns), fields);
    assert.deepEqual(await rowsOf('in.c-geo.boxes'), [
      fields.map((_, i) => String(i)),
      fields.map((_, i) => String(i + 10)),
    ]);
    const folder = path.join(dataDir, 'rows/b-read/in/tables');
    assert.equal(await readFile(path.join(folder, 'long-ago.csv'), 'utf8'), '"xmin","ctid"\n"0","4"\n"10","14"\n');
    assert.equal(await readFile(path.join(folder, 'far-ahead.csv'), 'utf8'), '"xmin"\n');
    assert.equal(await readFile(path.join(folder, 'nul.csv'), 'utf8'), '"xmin"\n"0"\n"10"\n');
    // gex tables preview (the CLI) reads it under the same names
    const preview = await runGexInProcess(
      [
        'tables',
        'preview',
        'in.c-geo.boxes',
        '--store',
        store.location,
        '--format',
        'json',
        '--changed-since',
        '-999999999 weeks',
      ],
      KEY,
    );
    assert.equal(preview.code, 0, preview.stderr);
    assert.deepEqual(JSON.parse(preview.stdout).columns, fields);
  });

  it("an input mapping's changed_since that is no moment fails the row with a user error naming the row, the entry and the value (exit 1)", async function () {
    this.timeout(60_000);
    await configure('badmoment', { outputBucket: 'shop' }, [
      [
        'r1',
        { jobs: [{ endpoint: 'users' }] },
        { input: { tables: [{ source: 'in.c-shop.users', changed_since: '2025-02-30' }] } },
      ],
    ]);
    answers.users = [{ id: 1 }];
    const result = await run('badmoment');
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(
      result.stdout + result.stderr,
      /Row r1, input table in\.c-shop\.users: storage\.input\.tables\[0\]\.changed_since "2025-02-30" is not a moment/,
    );
  });

  it("a failing second row: the first row's table stays loaded, no state is saved, exit 1", async function () {
    this.timeout(60_000);
    await configure('fail', { outputBucket: 'shop' }, [
      ['a-users', { jobs: [{ endpoint: 'users' }] }],
      ['b-missing', { jobs: [{ endpoint: 'missing' }] }],
    ]);
    answers.users = [{ id: 1 }];
    const before = await stateOf('fail');
    const result = await run('fail');
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.deepEqual(await rowsOf('in.c-shop.users'), [['1']]);
    assert.deepEqual(await tableIds(), ['in.c-shop.users']);
    assert.deepEqual(await stateOf('fail'), before, 'no state saved');
    const s = await summary();
    assert.equal(s.stateSaved, false);
    assert.deepEqual(
      s.rows.map((r) => r.status),
      ['success', 'failed'],
    );
  });

  it("a load that fails (primary key differs from the table's) fails the row with a user error; earlier rows' tables stay, no state saved", async function () {
    this.timeout(60_000);
    await configure('conflict', { outputBucket: 'shop' }, [
      ['a-orders', { jobs: [{ endpoint: 'orders' }] }],
      [
        'b-users',
        {
          jobs: [{ endpoint: 'users' }],
          incrementalOutput: true,
          mappings: { users: { id: { mapping: { destination: 'id', primaryKey: true } } } },
        },
      ],
      ['c-never', { jobs: [{ endpoint: 'orders' }] }],
    ]);
    // the project already has in.c-shop.users keyed by another column
    const seed = path.join(dir, 'seed.csv');
    await writeFile(seed, '"id","other"\n"9","x"\n');
    await withStore(({ tables }) => tables.load(seed, { destination: 'in.c-shop.users', primary_key: ['other'] }));
    answers.orders = [{ n: 1 }];
    answers.users = [{ id: 1 }];
    const result = await run('conflict');
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(
      result.stdout + result.stderr,
      reach === 'embedded'
        ? /Cannot load out\/tables\/shop\.users into the project: shop\.users: primary_key \["id"\] differs from the key of table in\.c-shop\.users, \["other"\]/
        : // the server's import job says it
          /Cannot load out\/tables\/shop\.users into the project: The Storage API at \S+ failed loading shop\.users into table "?in\.c-shop\.users"? \(job "?\d+"?\): The table in\.c-shop\.users has primary key other; the import asks for key id/,
    );
    assert.deepEqual(await rowsOf('in.c-shop.users'), [['9', 'x']], 'the failed load changed nothing');
    assert.deepEqual(await rowsOf('in.c-shop.orders'), [['1']], "the first row's table stays");
    const s = await summary();
    assert.deepEqual(
      s.rows.map((r) => r.status),
      ['success', 'failed', 'not run'],
    );
    assert.equal(s.stateSaved, false);
    assert.deepEqual((await stateOf('conflict')) ?? {}, {}, 'no state saved');
  });

  it("output mapping metadata and column_metadata land on the table with the component as provider, beside Keboola's system metadata; a later row reads them in its input manifest", async function () {
    this.timeout(60_000);
    const pairs = (list: ReadonlyArray<{ provider: string; key: string; value: string }>) =>
      list.map((m) => `${m.provider}:${m.key}=${m.value}`);
    await configure('meta', { outputBucket: 'shop' }, [
      [
        'a-users',
        { jobs: [{ endpoint: 'users' }] },
        {
          output: {
            tables: [
              {
                source: 'shop.users',
                metadata: [{ key: 'KBC.description', value: 'Our users, "all" of them' }],
                column_metadata: {
                  id: [{ key: 'KBC.datatype.basetype', value: 'INTEGER' }],
                  name: [{ key: 'KBC.datatype.basetype', value: 'STRING' }],
                },
              },
            ],
          },
        },
      ],
      [
        'b-report',
        { jobs: [{ endpoint: 'report' }] },
        { input: { tables: [{ source: 'in.c-shop.users', destination: 'u.csv' }] } },
      ],
    ]);
    answers.users = [{ id: 1, name: 'Ann' }];
    answers.report = [{ ok: 1 }];
    const first = await run('meta');
    assert.equal(first.code, 0, first.stdout + first.stderr);
    const created = await withStore(({ tables }) => tables.table('in.c-shop.users'));
    assert.deepEqual(pairs(created.metadata), [
      'system:KBC.createdBy.component.id=ex-generic-v2',
      'system:KBC.createdBy.configuration.id=meta',
      'system:KBC.createdBy.configurationRow.id=a-users',
      'system:KBC.lastUpdatedBy.component.id=ex-generic-v2',
      'system:KBC.lastUpdatedBy.configuration.id=meta',
      'system:KBC.lastUpdatedBy.configurationRow.id=a-users',
      'ex-generic-v2:KBC.description=Our users, "all" of them',
    ]);
    assert.deepEqual(
      [...created.columnMetadata!].map(([c, items]) => [c, pairs(items)]),
      [
        ['id', ['ex-generic-v2:KBC.datatype.basetype=INTEGER']],
        ['name', ['ex-generic-v2:KBC.datatype.basetype=STRING']],
      ],
    );
    const bucket = await withStore(({ tables }) => tables.bucket('in.c-shop'));
    assert.deepEqual(pairs(bucket.metadata), [
      'system:KBC.createdBy.component.id=ex-generic-v2',
      'system:KBC.createdBy.configuration.id=meta',
      'system:KBC.createdBy.configurationRow.id=a-users',
    ]);
    // the input mapping's manifest carries them as Keboola's does
    const manifest = JSON.parse(await readFile(path.join(dataDir, 'rows/b-report/in/tables/u.csv.manifest'), 'utf8'));
    assert.deepEqual(pairs(manifest.metadata), pairs(created.metadata));
    assert.deepEqual(Object.keys(manifest.column_metadata), ['id', 'name']);
    assert.deepEqual(pairs(manifest.column_metadata.id), ['ex-generic-v2:KBC.datatype.basetype=INTEGER']);

    // a second run sets the same items again: same ids, new timestamps
    const second = await run('meta', ['--row-id', 'a-users']);
    assert.equal(second.code, 0, second.stdout + second.stderr);
    const again = await withStore(({ tables }) => tables.table('in.c-shop.users'));
    assert.deepEqual(
      again.metadata.map((m) => m.id),
      created.metadata.map((m) => m.id),
    );
    assert.equal(again.metadata.length, 7);
  });

  it('column_metadata naming a column the table will not have fails the row (exit 1) naming it; the table and state are unchanged', async function () {
    this.timeout(60_000);
    await configure('badmeta', { outputBucket: 'shop' }, [
      [
        'a-users',
        { jobs: [{ endpoint: 'users' }] },
        { output: { tables: [{ source: 'shop.users', column_metadata: { town: [{ key: 'k', value: 'v' }] } }] } },
      ],
    ]);
    const seed = path.join(dir, 'seed.csv');
    await writeFile(seed, '"id","name"\n"9","x"\n');
    await withStore(({ tables }) => tables.load(seed, { destination: 'in.c-shop.users' }));
    answers.users = [{ id: 1, name: 'Ann' }];
    const result = await run('badmeta');
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(
      result.stdout + result.stderr,
      /Cannot load out\/tables\/shop\.users into the project: shop\.users: column_metadata names the column town, which table in\.c-shop\.users (does not|would not) have \(its columns: id, name\)/,
    );
    assert.deepEqual(await rowsOf('in.c-shop.users'), [['9', 'x']], 'nothing was loaded');
    assert.deepEqual((await withStore(({ tables }) => tables.table('in.c-shop.users'))).metadata, []);
    assert.deepEqual((await stateOf('badmeta')) ?? {}, {}, 'no state saved');
  });

  it('--no-load keeps files only: no table in the store, input tables not exported (a warning says so)', async function () {
    this.timeout(60_000);
    await configure('files', { outputBucket: 'shop' }, [
      ['a', { jobs: [{ endpoint: 'users' }] }, { input: { tables: [{ source: 'in.c-shop.users' }] } }],
    ]);
    answers.users = [{ id: 1 }];
    const result = await run('files', ['--no-load']);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.deepEqual(await tableIds(), []);
    assert.equal(await readFile(path.join(dataDir, 'rows/a/out/tables/shop.users'), 'utf8'), '"id"\n"1"\n');
    assert.deepEqual(await readdir(path.join(dataDir, 'rows/a/in')), ['state.json']);
    assert.match(
      result.stdout + result.stderr,
      /Row a lists 1 input table \(storage\.input\.tables\) that are not exported with --no-load/,
    );
    assert.doesNotMatch(result.stdout, /Loaded table/);
    assert.deepEqual((await summary()).rows[0].tables, [
      { file: 'rows/a/out/tables/shop.users', rows: 1, bytes: '"id"\n"1"\n'.length, loaded: false },
    ]);
  });

  it('a missing input table fails the row naming the row and the table', async function () {
    this.timeout(60_000);
    await configure('nosource', {}, [
      [
        'r1',
        { jobs: [{ endpoint: 'users' }] },
        { input: { tables: [{ source: 'in.c-shop.nothing', destination: 'x.csv' }] } },
      ],
    ]);
    answers.users = [{ id: 1 }];
    const result = await run('nosource');
    assert.equal(result.code, 1);
    assert.match(
      result.stdout + result.stderr,
      /Row r1: storage\.input\.tables\[0\]\.source: table in\.c-shop\.nothing does not exist in this project/,
    );
    assert.deepEqual(server.requests, [], 'the row did not start');
  });

  it('a hostile input destination is refused before anything is written, naming the row', async function () {
    this.timeout(60_000);
    await configure('evil', { outputBucket: 'shop' }, [
      ['r1', { jobs: [{ endpoint: 'users' }] }],
      [
        'r2',
        { jobs: [{ endpoint: 'users' }] },
        { input: { tables: [{ source: 'in.c-shop.users', destination: '../../../escaped.csv' }] } },
      ],
    ]);
    answers.users = [{ id: 1 }];
    const result = await run('evil');
    assert.equal(result.code, 1);
    assert.match(
      result.stdout + result.stderr,
      /Row r2: storage\.input\.tables\[0\]\.destination "\.\.\/\.\.\/\.\.\/escaped\.csv" contains a path separator/,
    );
    assert.deepEqual(
      await readdir(path.join(dataDir, 'rows')),
      ['r1'],
      'nothing written for r2, nothing beside the row folders',
    );
    const r2 = (await summary()).rows[1] as { status: string; reason?: string };
    assert.equal(r2.status, 'failed');
    assert.match(r2.reason ?? '', /^Row r2: storage\.input\.tables\[0\]\.destination/);
    assert.deepEqual((await readdir(dir)).sort(), ['data', 'summary.json']);
  });

  it('a configuration id a bucket name cannot hold: a table without destination fails with a clear user error', async function () {
    this.timeout(60_000);
    await configure('a.b/../c', { jobs: [{ endpoint: 'users' }] });
    answers.users = [{ id: 1 }];
    const result = await run('a.b/../c');
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(
      result.stdout + result.stderr,
      /Cannot load out\/tables\/users into the project: The default bucket in\.c-<component>-<configuration id> cannot be made from configuration id a\.b\/\.\.\/c: a bucket name holds only letters, digits, "-" and "_"\. Set parameters\.config\.outputBucket/,
    );
    assert.deepEqual(await tableIds(), []);
  });
}

/**
 * A Keboola stack in front of a gex server: every call forwarded, but tokens/verify says the
 * files live in Keboola's cloud (owner.fileStorageProvider "aws").
 */
async function keboolaStackProxy(target: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(([k]) => k !== 'host' && k !== 'content-length'),
      ) as Record<string, string>;
      void fetch(`${target}${request.url}`, {
        method: request.method,
        headers,
        body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
      }).then(async (answer) => {
        let body = await answer.text();
        if (request.url?.startsWith('/v2/storage/tokens/verify'))
          body = body.replace('"fileStorageProvider":"gex"', '"fileStorageProvider":"aws"');
        response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
        response.end(body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('gex run against a Keboola stack keeps files only', function () {
  this.timeout(60_000);
  let server: FixtureServer;
  let api: TestServer;
  let stack: { url: string; close: () => Promise<void> };
  let dir: string;

  before(async () => {
    server = await startFixtureServer({ handler: () => ({ body: [{ id: 1 }] }) });
    api = await TestServer.start();
    stack = await keboolaStackProxy(api.baseUrl);
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-remote-load-'));
  });
  after(async () => {
    await stack.close();
    await api.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs, writes the files and warns once at the start that tables are not loaded', async () => {
    const config = await api.createConfig({
      name: 'remote',
      configuration: {
        parameters: {
          api: { baseUrl: `${server.url}/api/` },
          config: { outputBucket: 'shop', jobs: [{ endpoint: 'users' }] },
        },
      },
    });
    const result = await runGexInProcess(
      [
        'run',
        '--config-id',
        String(config.id),
        '--data-dir',
        path.join(dir, 'data'),
        '--store',
        stack.url,
        '--token',
        api.token,
        '--summary',
        path.join(dir, 'summary.json'),
      ],
      {},
    );
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const said = result.stdout.match(/WARN {2}Tables are not loaded into Storage tables: [^\n]*/g) ?? [];
    assert.equal(said.length, 1, result.stdout);
    assert.match(
      said[0],
      /the Storage API at http:\/\/127\.0\.0\.1:\d+ keeps its files in cloud storage \("?aws"?\), which gex does not write to \(only a gex server takes uploads\); they stay files in the data folder/,
    );
    assert.ok(
      result.stdout.indexOf(said[0]) < result.stdout.indexOf('Running configuration'),
      'said before the first unit runs',
    );
    const tables = await api.request('GET', '/v2/storage/tables');
    assert.deepEqual(tables.body, [], 'nothing was loaded');
    assert.equal(await readFile(path.join(dir, 'data/out/tables/shop.users'), 'utf8'), '"id"\n"1"\n');
    const summary = JSON.parse(await readFile(path.join(dir, 'summary.json'), 'utf8')) as Summary;
    assert.deepEqual(summary.rows[0].tables, [
      { file: 'out/tables/shop.users', rows: 1, bytes: '"id"\n"1"\n'.length, loaded: false },
    ]);
  });
});
