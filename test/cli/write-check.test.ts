import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../support/cli.js';
import { SECRET, StoreCli } from '../support/store-cli.js';
import { useTestServer } from '../support/storage-api-server.js';
import { sqliteBackend, TEST_KEY, type FreshStore } from '../support/store.js';

const API = ['--set', 'parameters.api.baseUrl=http://x.example/'];
const JOBS = (endpoint = 'users') => ['--set', `parameters.config.jobs=[{"endpoint":"${endpoint}"}]`];

/**
 * `gex configs create|edit` and `gex rows add|edit` check what they store as a run would: typos are
 * warned with the nearest known key, what a run refuses is not stored (exit 1, path and reason)
 * unless --force. Each case would have been stored silently before.
 */
describe('gex configs and rows check what they store (CLI process)', function () {
  this.timeout(120_000);
  let dir: string;
  let store: FreshStore;
  let cli: StoreCli;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-write-check-'));
    store = await sqliteBackend.fresh();
    cli = new StoreCli({ ...TEST_KEY, GEX_STORE: store.location, KBC_URL: '', KBC_TOKEN: '', EDITOR: '', VISUAL: '' });
  });
  afterEach(async () => {
    await store.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  const versions = async (id: string) => (await cli.json(['configs', 'versions', id])).length;

  it('configs create: warns on unknown keys with the nearest known key, and on sections a run still needs; stores it', async () => {
    const r = await cli.run([
      'configs',
      'create',
      '--name',
      'shop',
      '--config-id',
      'shop',
      ...API,
      '--set',
      'parameters.api.paginaton.method=pagenum',
      '--set',
      'paramaters.x=1',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /^Warning: configuration shop: Unknown key paramaters \(ignored\): did you mean "parameters"\?$/m,
    );
    assert.match(
      r.stderr,
      /^Warning: configuration shop: Unknown key parameters\.api\.paginaton \(ignored\): did you mean "pagination"\?$/m,
    );
    assert.match(r.stderr, /^Warning: configuration shop: a run fails until parameters\.config is set$/m);
    assert.equal(await versions('shop'), 1);
  });

  it('refuses what a run refuses — wrong types, limit=abc, a job without its endpoint, bad output names — with the path and reason; --force stores it', async () => {
    await cli.ok([
      'configs',
      'create',
      '--name',
      'shop',
      '--config-id',
      'shop',
      ...API,
      '--set',
      `parameters.config.#password=${SECRET}`,
    ]);
    const refused: Array<[string[], RegExp]> = [
      [
        ['configs', 'edit', 'shop', '--set', 'parameters.api.pagination.limit=abc'],
        /^Error: Not stored: a run would refuse it\. configuration shop: Invalid configuration at parameters\.api\.pagination\.limit: got "abc"\. Expected the page size: a non-negative integer\. Fix it, or store it anyway with --force/,
      ],
      [
        ['configs', 'edit', 'shop', '--set', 'parameters.api.http.maxRequestsPerSecond="5"'],
        /configuration shop: Invalid configuration at parameters\.api\.http\.maxRequestsPerSecond: got "5"/,
      ],
      [
        ['rows', 'add', 'shop', '--row-id', 'users', '--set', 'parameters.config.jobs=[{"endpiont":"users"}]'],
        /row users: Invalid configuration at parameters\.config\.jobs\[0\]\.endpoint: is missing/,
      ],
      [
        ['rows', 'add', 'shop', '--row-id', 'users', ...JOBS(), '--set', 'parameters.config.outputBucket=../out'],
        /row users: Invalid configuration at parameters\.config\.outputBucket: the bucket name "\.\.\/out" contains a path separator/,
      ],
      [
        ['rows', 'add', 'shop', ...JOBS(), '--set', 'parameters.api.http.headers.X-A=a\u0001b'],
        /the new row: Invalid configuration at parameters\.api\.http\.headers/,
      ],
    ];
    for (const [args, pattern] of refused) {
      const stderr = await cli.fails(args);
      assert.match(stderr, pattern, args.join(' '));
    }
    // the typo that caused it is named too
    assert.match(
      await cli.fails(refused[2][0]),
      /^Warning: row users: Unknown key parameters\.config\.jobs\[0\]\.endpiont \(ignored\): did you mean "endpoint"\?$/m,
    );
    assert.equal(await versions('shop'), 1, 'nothing was stored');
    assert.deepEqual(await cli.json(['rows', 'list', 'shop']), []);

    const forced = await cli.run([
      'configs',
      'edit',
      'shop',
      '--set',
      'parameters.api.pagination.limit=abc',
      '--force',
    ]);
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(
      forced.stderr,
      /^Warning: stored anyway \(--force\): configuration shop: Invalid configuration at parameters\.api\.pagination\.limit/m,
    );
    assert.equal((await cli.json(['configs', 'get', 'shop'])).configuration.parameters.api.pagination.limit, 'abc');
    cli.assertNoSecretLeaked();
  });

  it('checks what $EDITOR saved the same way (not at a terminal: refused, nothing changed)', async () => {
    await cli.ok(['configs', 'create', '--name', 'shop', '--config-id', 'shop', ...API]);
    const editor = `node ${JSON.stringify(path.join(repoRoot, 'test/fixtures/editor/edit-config.mjs'))} refused-then-fix ${JSON.stringify(path.join(dir, 'editor.log'))}`;
    const stderr = await cli.fails(['configs', 'edit', 'shop'], { EDITOR: editor });
    assert.match(
      stderr,
      /Not stored: a run would refuse it\. configuration shop: Invalid configuration at parameters\.api\.pagination\.limit: got "abc".* Nothing was changed\.$/m,
    );
    assert.equal(await versions('shop'), 1);
  });

  it('checks a row merged over its root, and a root edit against every row; a problem the change did not bring does not block it', async () => {
    await cli.ok(['configs', 'create', '--name', 'shop', '--config-id', 'shop', ...API]);
    await cli.ok(['rows', 'add', 'shop', '--row-id', 'users', ...JOBS('users')]);
    await cli.ok(['rows', 'add', 'shop', '--row-id', 'orders', ...JOBS('orders')]);
    // the root's change breaks both rows
    assert.match(
      await cli.fails(['configs', 'edit', 'shop', '--set', 'parameters.api.pagination.limit=-1']),
      /row orders: Invalid configuration at parameters\.api\.pagination\.limit: got -1.*; row users: Invalid configuration/,
    );
    // a row's change that only the merge shows wrong: the root pages by offset, which needs a limit
    await cli.ok(['configs', 'edit', 'shop', '--set', 'parameters.api.pagination={"method":"offset","limit":10}']);
    assert.match(
      await cli.fails(['rows', 'edit', 'shop', '--row-id', 'users', '--set', 'parameters.api.pagination.limit=null']),
      /row users: Invalid configuration at parameters\.api\.pagination\.limit/,
    );
    // a row broken on purpose (--force) does not block an unrelated root change
    await cli.ok([
      'rows',
      'edit',
      'shop',
      '--row-id',
      'orders',
      '--set',
      'parameters.config.jobs[0].method=PATCH',
      '--force',
    ]);
    const r = await cli.run(['configs', 'edit', 'shop', '--set', 'parameters.api.baseUrl=http://y.example/']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /^Warning: row orders: Invalid configuration at parameters\.config\.jobs\[0\]\.method: .* \(so before this change too\)$/m,
    );
    // the rows' own typos are theirs: not repeated on a root edit
    assert.ok(!r.stderr.includes('Unknown key'), r.stderr);
  });
});

describe('gex configs check on a Storage API, and the server storing anything (CLI process)', function () {
  this.timeout(120_000);
  const server = useTestServer();
  let cli: StoreCli;
  beforeEach(() => {
    cli = new StoreCli({
      ...TEST_KEY,
      GEX_STORE: '',
      KBC_URL: server().baseUrl,
      KBC_TOKEN: server().token,
      EDITOR: '',
      VISUAL: '',
    });
  });

  it('refuses limit=abc through the CLI, while the API itself takes it', async () => {
    await cli.ok(['configs', 'create', '--name', 'remote', '--config-id', 'r', ...API]);
    assert.match(
      await cli.fails(['configs', 'edit', 'r', '--set', 'parameters.api.pagination.limit=abc']),
      /Invalid configuration at parameters\.api\.pagination\.limit: got "abc"/,
    );
    const body = new URLSearchParams({
      configuration: JSON.stringify({
        parameters: { api: { baseUrl: 'x', pagination: { limit: 'abc' } }, paramaters: 1 },
      }),
    });
    const response = await fetch(`${server().baseUrl}/v2/storage/branch/default/components/ex-generic-v2/configs/r`, {
      method: 'PUT',
      headers: { 'X-StorageApi-Token': server().token, 'Content-Type': 'application/x-www-form-urlencoded' },
      body,
    });
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal((await cli.json(['configs', 'get', 'r'])).configuration.parameters.api.pagination.limit, 'abc');
  });
});
