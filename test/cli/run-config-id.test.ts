import { existsSync } from 'node:fs';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { fromPlain } from '../../src/json/index.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { runGexInProcess } from '../support/in-process-gex.js';

const KEY = '44'.repeat(32);

describe('gex run --config-id (CLI, SQLite store)', () => {
  let server: FixtureServer;
  let dir: string;
  let storeFile: string;
  let configId: string;

  before(async () => {
    server = await startFixtureServer({
      handler: (r) =>
        r.url.startsWith('/api/users')
          ? { body: [{ id: 1 }] }
          : r.url.startsWith('/api/fail')
            ? { status: 401, body: { error: 'no' } }
            : undefined,
    });
  });
  after(() => server.close());

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-cli-runner-'));
    storeFile = path.join(dir, 'store.sqlite');
    const backend = await openEmbeddedStore(storeFile, { GEX_MASTER_KEY: KEY });
    const store = await backend.localSession();
    const c = await store.createConfiguration('ex-generic-v2', {
      name: 'cli',
      configuration: fromPlain({
        parameters: { api: { baseUrl: `${server.url}/api/` }, config: { outputBucket: 'b' } },
      }),
    });
    await store.createRow('ex-generic-v2', c.id, {
      rowId: 'users',
      name: 'Users',
      configuration: fromPlain({ parameters: { config: { jobs: [{ endpoint: 'users' }] } } }),
    });
    await store.createRow('ex-generic-v2', c.id, {
      rowId: 'fail',
      isDisabled: true,
      configuration: fromPlain({ parameters: { config: { jobs: [{ endpoint: 'fail' }] } } }),
    });
    configId = c.id;
    await backend.close();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const env = () => ({ GEX_MASTER_KEY: KEY, KBC_DATADIR: path.join(dir, 'data'), GEX_STORE: storeFile });

  it('takes the config id from KBC_CONFIGID, exits 0 and writes the summary', async () => {
    const result = await runGexInProcess(['run', '--summary', path.join(dir, 'summary.json')], {
      ...env(),
      KBC_CONFIGID: configId,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /row 1 of 1: users Users/);
    const summary = JSON.parse(await readFile(path.join(dir, 'summary.json'), 'utf8'));
    assert.equal(summary.status, 'success');
    assert.equal(summary.rowsRun, 1);
    assert.equal(summary.rowsSkipped, 1);
    assert.deepEqual(
      summary.rows.map((r: { id: string; status: string }) => [r.id, r.status]),
      [
        ['fail', 'skipped'],
        ['users', 'success'],
      ],
    );
    assert.deepEqual(summary.rows[1].tables, [
      {
        file: 'rows/users/out/tables/b.users',
        rows: 1,
        bytes: '"id"\n"1"\n'.length,
        loaded: true,
        tableId: 'in.c-b.users',
      },
    ]);
    assert.equal(summary.rows[1].requests, 1);
    assert.equal(summary.stateSaved, true);
    assert.equal(typeof summary.durationMs, 'number');
  });

  it('exits 1 when a forced row fails (KBC_CONFIGROWID), and the summary says why', async () => {
    const result = await runGexInProcess(['run', '--config-id', configId, '--summary', path.join(dir, 's.json')], {
      ...env(),
      KBC_CONFIGROWID: 'fail',
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /The API request failed: \[401\]/);
    const summary = JSON.parse(await readFile(path.join(dir, 's.json'), 'utf8'));
    assert.equal(summary.status, 'error');
    assert.equal(summary.error.kind, 'user');
    assert.equal(summary.error.code, 'GEX_API_REQUEST_FAILED', 'the catalogue code of the refused request');
    assert.equal(summary.stateSaved, false);
  });

  it('takes --row-id as a comma list, like repeating it and like KBC_CONFIGROWID', async () => {
    for (const [args, extra] of [
      [['--row-id', 'users,fail'], {}],
      [['--row-id', 'users', '--row-id', 'fail'], {}],
      [[], { KBC_CONFIGROWID: 'users, fail' }],
    ] as const) {
      const summaryFile = path.join(dir, 'rows.json');
      const result = await runGexInProcess(['run', '--config-id', configId, '--summary', summaryFile, ...args], {
        ...env(),
        ...extra,
      });
      assert.equal(result.code, 1, 'the disabled row "fail" ran because it was named');
      const summary = JSON.parse(await readFile(summaryFile, 'utf8'));
      assert.deepEqual(
        summary.rows.map((r: { id: string; status: string }) => [r.id, r.status]),
        [
          ['fail', 'failed'],
          ['users', 'not run'],
        ],
        JSON.stringify(args),
      );
      await rm(path.join(dir, 'data'), { recursive: true, force: true });
    }
  });

  it('exits 1 for an unknown row id, listing the rows', async () => {
    const result = await runGexInProcess(['run', '--config-id', configId, '--row-id', 'zzz'], env());
    assert.equal(result.code, 1);
    assert.match(result.stderr, /Row "zzz" not found in configuration .* Existing rows: fail, users \(Users\)\./);
  });

  it('exits 2 on an application error (the store cannot be opened) and still writes a summary', async () => {
    // a damaged database: the SQLite header, then garbage
    const damaged = path.join(dir, 'damaged.sqlite');
    await writeFile(damaged, Buffer.concat([Buffer.from('SQLite format 3\u0000', 'latin1'), Buffer.alloc(4096, 0xab)]));
    const result = await runGexInProcess(
      ['run', '--config-id', configId, '--store', damaged, '--summary', path.join(dir, 'f.json')],
      env(),
    );
    assert.equal(result.code, 2, result.stderr);
    const summary = JSON.parse(await readFile(path.join(dir, 'f.json'), 'utf8'));
    assert.equal(summary.error.kind, 'application');
    assert.equal(summary.error.code, 'GEX_INTERNAL', 'an unexpected fault has the catalogue code of one');
  });

  it('exits 1 when --store names a file in a folder that does not exist (a user mistake), creating nothing', async () => {
    const result = await runGexInProcess(
      ['run', '--config-id', configId, '--store', path.join(dir, 'no', 'such', 'dir', 'x.sqlite')],
      env(),
    );
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /No store at .*x\.sqlite: this command only reads or runs, so it creates no store/);
    assert.ok(!existsSync(path.join(dir, 'no')));
  });
});
