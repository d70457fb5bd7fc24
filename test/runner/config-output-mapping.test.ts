import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { fromPlain, toPlain } from '../../src/json/index.js';
import { runGex, type CliResult } from '../support/cli.js';
import { openConfigStore } from '../support/open-store.js';
import type { EmbeddedOpenedStore } from '../../src/store/open-config-store.js';
import { describeEachBackend } from '../support/storage-api-server.js';
import type { FreshStore } from '../support/store.js';

const KEY = { GEX_MASTER_KEY: '77'.repeat(32) };
const C = 'ex-generic-v2';

interface Summary {
  status: string;
  stateSaved: boolean;
  rows: Array<{
    id: string | null;
    status: string;
    reason?: string;
    tables: Array<{ file: string; rows: number; loaded: boolean; tableId?: string }>;
    inputTables?: Array<{ source: string; file: string; rows: number }>;
  }>;
}

/**
 * The configuration's own output mapping (storage.output.tables) through real `gex run
 * --config-id` processes on a real store (a SQLite file; PostgreSQL with GEX_TEST_POSTGRES).
 */
describeEachBackend('gex run applies the configuration output mapping', (factory) => {
  let server: FixtureServer;
  /** what /api/<name> answers (a JSON list); a name not here is a 404 */
  let answers: Record<string, unknown[]>;
  let dir: string;
  let dataDir: string;
  let store: FreshStore;

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
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-config-output-mapping-'));
    dataDir = path.join(dir, 'data');
    store = await factory.fresh();
  });
  afterEach(async function () {
    this.timeout(60_000);
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

  /** A configuration `id`: parameters.config `config`, root `storage`, rows `[rowId, parameters.config, storage?]`. */
  async function configure(
    id: string,
    config: Record<string, unknown>,
    storage: Record<string, unknown> | null,
    rows: Array<[string, Record<string, unknown>, Record<string, unknown>?]> = [],
  ): Promise<void> {
    await withStore(async ({ store: s }) => {
      await s.createConfiguration(C, {
        name: id,
        configurationId: id,
        configuration: fromPlain({
          parameters: { api: { baseUrl: `${server.url}/api/` }, config },
          ...(storage ? { storage } : {}),
        }),
      });
      for (const [rowId, rowConfig, rowStorage] of rows) {
        await s.createRow(C, id, {
          rowId,
          name: rowId,
          configuration: fromPlain({
            parameters: { config: rowConfig },
            ...(rowStorage ? { storage: rowStorage } : {}),
          }),
        });
      }
    });
  }

  const gex = (args: string[]): Promise<CliResult> => runGex([...args, '--store', store.location], KEY);
  const run = (id: string): Promise<CliResult> =>
    gex(['run', '--config-id', id, '--data-dir', dataDir, '--summary', path.join(dir, 'summary.json')]);
  const summary = async () => JSON.parse(await readFile(path.join(dir, 'summary.json'), 'utf8')) as Summary;
  const rowsOf = async (tableId: string) =>
    (await withStore(async ({ tables }) => (await tables.preview(tableId, { limit: 1000 })).rows)).sort((a, b) =>
      a[0].localeCompare(b[0]),
    );
  const tableIds = () => withStore(async ({ tables }) => (await tables.listTables()).map((t) => t.id).sort());
  const stateOf = (id: string) => withStore(async ({ store: s }) => toPlain((await s.getConfiguration(C, id)).state));

  it("a mapping's incremental load by key upserts across two runs (no duplicates) and overrides the manifest's destination", async function () {
    this.timeout(60_000);
    // outputBucket makes GE write shop.users with a manifest destination in.c-shop.users; the mapping wins
    await configure(
      'crm',
      { outputBucket: 'shop', jobs: [{ endpoint: 'users' }] },
      {
        output: {
          tables: [{ source: 'shop.users', destination: 'out.c-crm.people', incremental: true, primary_key: ['id'] }],
        },
      },
    );
    answers.users = [
      { id: 1, name: 'Ann' },
      { id: 2, name: 'Bob' },
    ];
    const first = await run('crm');
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.match(first.stdout, /Loaded table out\.c-crm\.people: 2 rows \(incremental, key id\)/);
    answers.users = [
      { id: 2, name: 'Bobby' },
      { id: 3, name: 'Cid' },
    ];
    const second = await run('crm');
    assert.equal(second.code, 0, second.stdout + second.stderr);
    assert.deepEqual(await rowsOf('out.c-crm.people'), [
      ['1', 'Ann'],
      ['2', 'Bobby'],
      ['3', 'Cid'],
    ]);
    assert.deepEqual(await tableIds(), ['out.c-crm.people'], "the manifest's destination got nothing");
    assert.deepEqual(await withStore(async ({ tables }) => (await tables.table('out.c-crm.people')).primaryKey), [
      'id',
    ]);
  });

  it('a mapping source that matches no file fails the row before any table is loaded; no state is saved', async function () {
    this.timeout(60_000);
    await configure(
      'miss',
      { outputBucket: 'shop', jobs: [{ endpoint: 'users' }] },
      {
        output: {
          tables: [
            { source: 'shop.users', destination: 'in.c-crm.users' },
            { source: 'users.csv', destination: 'in.c-crm.other' },
          ],
        },
      },
    );
    answers.users = [{ id: 1 }];
    const before = await stateOf('miss');
    const result = await run('miss');
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stdout + result.stderr, /Table sources not found: "users\.csv"/);
    assert.deepEqual(await tableIds(), [], 'no table loaded, not even the one whose source exists');
    assert.deepEqual(await stateOf('miss'), before, 'no state saved');
    const s = await summary();
    assert.equal(s.stateSaved, false);
    assert.match(s.rows[0].reason ?? '', /Table sources not found: "users\.csv"/);
  });

  it("root's mapping merged under a row's by index; a later row's input mapping reads the table it wrote", async function () {
    this.timeout(60_000);
    await configure(
      'merge',
      { outputBucket: 'shop' },
      { output: { tables: [{ source: 'shop.users', incremental: true, primary_key: ['id'] }] } },
      [
        ['a-users', { jobs: [{ endpoint: 'users' }] }, { output: { tables: [{ destination: 'in.c-crm.users' }] } }],
        [
          'b-report',
          { jobs: [{ endpoint: 'report' }] },
          {
            input: { tables: [{ source: 'in.c-crm.users', destination: 'users.csv' }] },
            // the root's entry is merged under this row's too (its primary_key stays: an empty list clears nothing)
            output: {
              tables: [{ source: 'shop.report', destination: 'in.c-crm.report', incremental: false }],
            },
          },
        ],
      ],
    );
    answers.users = [
      { id: 1, name: 'Ann' },
      { id: 2, name: 'Bob' },
    ];
    answers.report = [{ id: 7, ok: 1 }];
    const check = await gex(['check', '--config-id', 'merge']);
    assert.equal(check.code, 0, check.stdout + check.stderr);
    assert.match(check.stdout, /table shop\.users → in\.c-crm\.users \(output mapping storage\.output\.tables\[0\]\)/);
    assert.match(check.stdout, /input table in\.c-crm\.users ← written by the output mapping of row 1 of 2: a-users/);
    assert.match(check.stdout, /other tables → in\.c-shop\.<table> \(the manifests' destination, from outputBucket\)/);
    const dry = await gex(['run', '--dry-run', '--config-id', 'merge']);
    assert.equal(dry.code, 0, dry.stdout + dry.stderr);
    assert.match(dry.stdout, /table shop\.report → in\.c-crm\.report \(output mapping storage\.output\.tables\[0\]\)/);

    for (const _ of [1, 2]) {
      const result = await run('merge');
      assert.equal(result.code, 0, result.stdout + result.stderr);
    }
    assert.deepEqual(await rowsOf('in.c-crm.users'), [
      ['1', 'Ann'],
      ['2', 'Bob'],
    ]);
    assert.deepEqual(await tableIds(), ['in.c-crm.report', 'in.c-crm.users']);
    assert.equal(
      await readFile(path.join(dataDir, 'rows/b-report/in/tables/users.csv'), 'utf8'),
      '"id","name"\n"1","Ann"\n"2","Bob"\n',
    );
    assert.deepEqual((await summary()).rows[1].inputTables?.[0].rows, 2);
  });

  it("a mapping's columns that the file's header disagrees with, or a key the table lacks: refused naming the file, the table unchanged", async function () {
    this.timeout(60_000);
    await configure(
      'bad',
      { outputBucket: 'shop', jobs: [{ endpoint: 'users' }] },
      { output: { tables: [{ source: 'shop.users', destination: 'in.c-crm.users', columns: ['id', 'mail'] }] } },
    );
    answers.users = [{ id: 1, name: 'Ann' }];
    const result = await run('bad');
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(
      result.stdout + result.stderr,
      /out\/tables\/shop\.users: its header \[\\?"id\\?",\\?"name\\?"\] is not the columns/,
    );
    assert.deepEqual(await tableIds(), []);

    await withStore(({ store: s }) =>
      s.updateConfiguration(C, 'bad', {
        configuration: fromPlain({
          parameters: { api: { baseUrl: `${server.url}/api/` }, config: { jobs: [{ endpoint: 'users' }] } },
          storage: { output: { tables: [{ source: 'users', destination: 'in.c-crm.users', primary_key: ['mail'] }] } },
        }),
      }),
    );
    const noKey = await run('bad');
    assert.equal(noKey.code, 1, noKey.stdout + noKey.stderr);
    assert.match(noKey.stdout + noKey.stderr, /users[^\n]*mail/);
    assert.deepEqual(await tableIds(), []);
  });
});
