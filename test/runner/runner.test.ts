import assert from 'node:assert/strict';
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DataFolder } from '../../src/extractor/data-folder.js';
import { extract } from '../../src/extractor/extractor.js';
import { Runner, type RunSummary } from '../../src/runner/runner.js';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { fromPlain, stringifyExact, toPlain } from '../../src/json/index.js';
import type { ConfigStore } from '../../src/store/config-store.js';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import { openConfigStore, openEmbeddedStore, type OpenedStore } from '../support/open-store.js';
import { captureLogger } from '../support/extraction.js';

const C = 'ex-generic-v2';
const KEY = { GEX_MASTER_KEY: '33'.repeat(32) };

/** A paged API: /api/<name>?page=N answers `sizes[name][N-1]` records; /api/missing is 404. */
function api(sizes: Record<string, number[]>) {
  return (request: { url: string }) => {
    const url = new URL(request.url, 'http://x');
    const name = url.pathname.replace('/api/', '');
    if (!(name in sizes)) return undefined;
    const page = Number(url.searchParams.get('page') ?? 1);
    const count = sizes[name][page - 1] ?? 0;
    return { body: { data: Array.from({ length: count }, (_, i) => ({ id: page * 100 + i, src: name })) } };
  };
}

/** the runner's pinned clock: 2026-11-23T12:00:00Z */
const RUN_START_MS = 1_795_435_200_000;

describe('runner: stored configuration row by row', () => {
  let server: FixtureServer;
  let dir: string;
  let backend: EmbeddedBackend;
  let store: ConfigStore;
  let opened: OpenedStore;
  let logs: () => string;

  before(async () => {
    server = await startFixtureServer({ handler: api({ users: [2, 1], orders: [3, 3, 0], items: [1] }) });
  });
  after(() => server.close());

  beforeEach(async () => {
    server.requests.length = 0;
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-runner-'));
    backend = await openEmbeddedStore(path.join(dir, 'store.sqlite'), KEY);
    store = await backend.localSession();
    await backend.close();
    opened = await openConfigStore(path.join(dir, 'store.sqlite'), { env: KEY });
    store = opened.store;
  });
  afterEach(async () => {
    await opened.close();
    await rm(dir, { recursive: true, force: true });
  });

  const root = (config: Record<string, unknown> = {}) =>
    fromPlain({
      parameters: {
        api: { baseUrl: `${server.url}/api/`, pagination: { method: 'pagenum', limit: 2 } },
        config: { outputBucket: 'b', ...config },
      },
    });
  const rowConfig = (endpoint: string, params?: Record<string, unknown>) =>
    fromPlain({ parameters: { config: { jobs: [{ endpoint, dataField: 'data', params }] } } });

  async function run(configId: string, rowIds: string[] = []): Promise<RunSummary> {
    const capture = captureLogger('debug');
    logs = capture.text;
    const runner = new Runner({
      target: { kind: 'stored', store: opened, componentId: C, configId, rowIds },
      dataDir: path.join(dir, 'data'),
      logger: capture.logger,
      masker: capture.masker,
      now: () => RUN_START_MS,
    });
    try {
      return await runner.run();
    } catch (error) {
      (error as { summary?: RunSummary }).summary = runner.result;
      throw error;
    }
  }

  const requests = () => server.requests.map((r) => r.url);

  it('runs a configuration without rows once, with the root state, and saves the root state', async () => {
    const c = await store.createConfiguration(C, {
      name: 'plain',
      configuration: root({ jobs: [{ endpoint: 'users', dataField: 'data' }] }),
      state: fromPlain({ component: { time: { previousStart: 5 }, mine: 1 }, other: 'kept' }),
    });
    const summary = await run(c.id);
    assert.equal(summary.status, 'success');
    assert.deepEqual(requests(), ['/api/users?page=1&limit=2', '/api/users?page=2&limit=2']);
    assert.equal(await readFile(path.join(dir, 'data/in/state.json'), 'utf8'), '{"time":{"previousStart":5},"mine":1}');
    assert.equal(
      await readFile(path.join(dir, 'data/out/tables/b.users'), 'utf8'),
      '"id","src"\n"100","users"\n"101","users"\n"200","users"\n',
    );
    const state = toPlain((await store.getConfiguration(C, c.id)).state) as {
      component: { mine: number; time: { previousStart: number } };
      storage: unknown;
      other: string;
    };
    assert.equal(state.component.mine, 1);
    assert.equal(state.component.time.previousStart, RUN_START_MS / 1000, "this run's start, from the runner's clock");
    assert.deepEqual(state.storage, { input: { tables: [], files: [] } });
    assert.equal(state.other, 'kept');
  });

  it('runs rows in id order without rowsSortOrder and in rowsSortOrder when set, each merged with the root', async () => {
    const c = await store.createConfiguration(C, { name: 'rows', configuration: root() });
    await store.createRow(C, c.id, {
      rowId: 'b-orders',
      name: 'Orders',
      configuration: rowConfig('orders', { limit: 3 }),
    });
    await store.createRow(C, c.id, { rowId: 'a-users', name: 'Users', configuration: rowConfig('users') });
    const summary = await run(c.id);
    // each row lists its jobs and why they stopped
    assert.deepEqual(
      summary.rows.map((r) => [r.id, r.jobs]),
      [
        ['a-users', [{ job: 'users', pages: 2, records: 3, stoppedBy: 'underflow' }]],
        ['b-orders', [{ job: 'orders', pages: 3, records: 6, stoppedBy: 'underflow' }]],
      ],
    );
    assert.deepEqual(requests(), [
      '/api/users?page=1&limit=2',
      '/api/users?page=2&limit=2',
      '/api/orders?limit=3&page=1',
      '/api/orders?limit=3&page=2',
      '/api/orders?limit=3&page=3',
    ]);
    assert.match(logs(), /row 1 of 2: a-users Users[\s\S]*row 2 of 2: b-orders Orders/);
    server.requests.length = 0;
    await store.updateConfiguration(C, c.id, { rowsSortOrder: ['b-orders', 'a-users'] });
    await run(c.id);
    assert.deepEqual(
      requests().map((u) => u.split('?')[0]),
      ['/api/orders', '/api/orders', '/api/orders', '/api/users', '/api/users'],
    );
    assert.deepEqual((await readdir(path.join(dir, 'data/rows'))).sort(), ['a-users', 'b-orders']);
    assert.equal(
      await readFile(path.join(dir, 'data/rows/b-orders/out/tables/b.orders'), 'utf8').then(
        (t) => t.split('\n').length - 2,
      ),
      6,
    );
    const cfg = JSON.parse(await readFile(path.join(dir, 'data/rows/a-users/config.json'), 'utf8')) as {
      parameters: { api: { baseUrl: string }; config: { jobs: unknown[] } };
      action: string;
      image_parameters: object;
    };
    assert.equal(cfg.parameters.api.baseUrl, `${server.url}/api/`);
    assert.equal(cfg.parameters.config.jobs.length, 1);
    assert.equal(cfg.action, 'run');
    assert.deepEqual(cfg.image_parameters, {});
  });

  it("a row's folder is a data folder: extracting it again gives the same tables and state", async () => {
    const c = await store.createConfiguration(C, { name: 'rows', configuration: root() });
    await store.createRow(C, c.id, { rowId: 'a-users', configuration: rowConfig('users') });
    await run(c.id);
    const rowDir = path.join(dir, 'data/rows/a-users');
    const table = await readFile(path.join(rowDir, 'out/tables/b.users'), 'utf8');
    const state = await readFile(path.join(rowDir, 'out/state.json'), 'utf8');
    server.requests.length = 0;
    const again = path.join(dir, 'again');
    await cp(rowDir, again, { recursive: true });
    await rm(path.join(again, 'out'), { recursive: true });
    const folder = new DataFolder(again);
    const result = await extract(await folder.read(), {
      dataDir: again,
      logger: captureLogger().logger,
      now: () => RUN_START_MS / 1000,
    });
    await folder.writeOutputState(result.state);
    assert.deepEqual(requests(), ['/api/users?page=1&limit=2', '/api/users?page=2&limit=2']);
    assert.equal(await readFile(path.join(again, 'out/tables/b.users'), 'utf8'), table);
    assert.equal(await readFile(path.join(again, 'out/state.json'), 'utf8'), state);
  });

  it('skips disabled rows, runs them when named, and rejects unknown row ids listing the existing ones', async () => {
    const c = await store.createConfiguration(C, { name: 'rows', configuration: root() });
    await store.createRow(C, c.id, { rowId: 'on', configuration: rowConfig('users') });
    await store.createRow(C, c.id, { rowId: 'off', name: 'Off', isDisabled: true, configuration: rowConfig('items') });
    const summary = await run(c.id);
    assert.deepEqual(
      summary.rows.map((r) => [r.id, r.status]),
      [
        ['off', 'skipped'],
        ['on', 'success'],
      ],
    );
    assert.equal(summary.rowsSkipped, 1);
    assert.match(logs(), /Skipping row off "Off": disabled \(run it anyway with --row-id off\)/);
    server.requests.length = 0;
    const forced = await run(c.id, ['off']);
    assert.deepEqual(requests(), ['/api/items?page=1&limit=2']);
    assert.deepEqual(
      forced.rows.map((r) => [r.id, r.status]),
      [
        ['off', 'success'],
        ['on', 'skipped'],
      ],
    );
    await assert.rejects(
      run(c.id, ['nope']),
      /Row "nope" not found in configuration \d+\. Existing rows: off \(Off\), on\./,
    );
  });

  it('all rows disabled: success with "No configurations executed." and nothing saved', async () => {
    const c = await store.createConfiguration(C, { name: 'rows', configuration: root() });
    await store.createRow(C, c.id, { rowId: 'x', isDisabled: true, configuration: rowConfig('users') });
    const summary = await run(c.id);
    assert.equal(summary.message, 'No configurations executed.');
    assert.equal(summary.stateSaved, false);
    assert.deepEqual(requests(), []);
  });

  it('gives each row its own state in and saves it back in the stored shape; root state is unused', async () => {
    const c = await store.createConfiguration(C, {
      name: 'rows',
      configuration: root(),
      state: fromPlain({ component: { root: true } }),
    });
    await store.createRow(C, c.id, {
      rowId: 'r1',
      configuration: rowConfig('users'),
      state: fromPlain({ component: { time: { previousStart: 1 }, cursor: 'a' }, data_app: { x: 1 } }),
    });
    await store.createRow(C, c.id, { rowId: 'r2', configuration: rowConfig('items') });
    await run(c.id);
    assert.equal(
      await readFile(path.join(dir, 'data/rows/r1/in/state.json'), 'utf8'),
      '{"time":{"previousStart":1},"cursor":"a"}',
    );
    assert.equal(await readFile(path.join(dir, 'data/rows/r2/in/state.json'), 'utf8'), '{}');
    const after = await store.getConfiguration(C, c.id);
    const r1 = toPlain(after.rows.find((r) => r.id === 'r1')!.state) as {
      component: { cursor: string; time: { previousStart: number } };
      storage: unknown;
      data_app: unknown;
    };
    assert.equal(r1.component.cursor, 'a');
    assert.equal(r1.component.time.previousStart, RUN_START_MS / 1000);
    assert.deepEqual(r1.storage, { input: { tables: [], files: [] } });
    assert.deepEqual(r1.data_app, { x: 1 });
    assert.equal(stringifyExact(after.state), '{"component":{"root":true}}', 'the root state is not touched');
    assert.equal(after.version, c.version + 2, 'saving state makes no version');
  });

  it('a failing second row saves no state at all and leaves no partial table', async () => {
    const c = await store.createConfiguration(C, { name: 'rows', configuration: root() });
    await store.createRow(C, c.id, {
      rowId: '1-ok',
      configuration: rowConfig('users'),
      state: fromPlain({ component: { before: 1 } }),
    });
    await store.createRow(C, c.id, { rowId: '2-bad', configuration: rowConfig('missing') });
    await store.createRow(C, c.id, { rowId: '3-later', configuration: rowConfig('items') });
    await assert.rejects(run(c.id), (e: Error & { summary?: RunSummary }) => {
      assert.match(e.message, /The API request failed: \[404\]/);
      assert.deepEqual(
        e.summary!.rows.map((r) => [r.id, r.status]),
        [
          ['1-ok', 'success'],
          ['2-bad', 'failed'],
          ['3-later', 'not run'],
        ],
      );
      assert.equal(e.summary!.error!.kind, 'user');
      assert.equal(e.summary!.stateSaved, false);
      return true;
    });
    const after = await store.getConfiguration(C, c.id);
    assert.equal(stringifyExact(after.rows[0].state), '{"component":{"before":1}}');
    assert.deepEqual(await readdir(path.join(dir, 'data/rows/2-bad/out/tables')), []);
    assert.ok(!requests().some((u) => u.startsWith('/api/items')), 'later rows do not run');
    assert.match(logs(), /No state is saved/);
  });

  it('a stored state of {} makes the row run as the first time', async () => {
    const c = await store.createConfiguration(C, { name: 'rows', configuration: root() });
    const row = await store.createRow(C, c.id, {
      configuration: rowConfig('users'),
      state: fromPlain({ component: { time: { previousStart: 99 } } }),
    });
    await store.updateRowState(C, c.id, row.id, fromPlain({}));
    await run(c.id);
    assert.equal(await readFile(path.join(dir, `data/rows/${row.id}/in/state.json`), 'utf8'), '{}');
  });

  it('decrypts secrets in memory only: the API receives them, disk and logs never do', async () => {
    const secret = 'pl41n-s3cret';
    const c = await store.createConfiguration(C, { name: 'rows', configuration: root() });
    await store.createRow(C, c.id, { rowId: 's', configuration: rowConfig('users', { '#apiKey': secret }) });
    await run(c.id);
    assert.ok(requests()[0].includes(`%23apiKey=${secret}`), 'the API gets the plaintext');
    const onDisk = await readFile(path.join(dir, 'data/rows/s/config.json'), 'utf8');
    assert.ok(!onDisk.includes(secret));
    assert.match(onDisk, /"#apiKey":"KBC::ProjectSecure::/);
    assert.ok(logs().includes('%23apiKey=[hidden]'), 'debug logs show the request with the secret hidden');
    assert.ok(!logs().includes(secret));
  });

  it('refuses a disabled configuration unless forced', async () => {
    const c = await store.createConfiguration(C, { name: 'off', configuration: root(), isDisabled: true });
    await assert.rejects(
      run(c.id),
      /Configuration \d+ is disabled\. Enable it in the store, or run it anyway with --force\./,
    );
  });

  it('names the store and the id when the configuration does not exist', async () => {
    await assert.rejects(run('nope'), /Configuration nope of component ex-generic-v2 not found in .*store\.sqlite/);
  });
});
