import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { fromPlain } from '../../src/json/index.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { runGexInProcess } from '../support/in-process-gex.js';

const KEY = '55'.repeat(32);
const SECRET = 'row-secret-8f2k1';

describe('gex check --config-id and gex run --dry-run --config-id (CLI, SQLite store)', () => {
  let server: FixtureServer;
  let dir: string;
  let storeFile: string;
  let configId: string;

  before(async () => {
    server = await startFixtureServer({
      handler: (r) => (r.url.startsWith('/api/users') ? { body: [{ id: 1, name: 'a' }] } : undefined),
    });
  });
  after(() => server.close());

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-check-rows-'));
    storeFile = path.join(dir, 'store.sqlite');
    const backend = await openEmbeddedStore(storeFile, { GEX_MASTER_KEY: KEY });
    const store = await backend.localSession();
    const c = await store.createConfiguration('ex-generic-v2', {
      name: 'rows',
      configuration: fromPlain({
        parameters: {
          api: { baseUrl: `${server.url}/api/`, http: { headers: { 'X-Key': { attr: '#key' } } } },
          config: { outputBucket: 'b', '#key': SECRET },
        },
      }),
    });
    await store.createRow('ex-generic-v2', c.id, {
      rowId: 'users',
      name: 'Users',
      configuration: fromPlain({ parameters: { config: { jobs: [{ endpoint: 'users', params: { per: 5 } }] } } }),
    });
    await store.createRow('ex-generic-v2', c.id, {
      rowId: 'typo',
      name: 'Typo',
      configuration: fromPlain({ parameters: { config: { jobs: [{ endpoint: 'users', dataFeild: 'x' }] } } }),
    });
    await store.createRow('ex-generic-v2', c.id, {
      rowId: 'off',
      isDisabled: true,
      configuration: fromPlain({ parameters: { config: { jobs: [{ endpoint: 'missing' }] } } }),
    });
    configId = c.id;
    await backend.close();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const env = () => ({ GEX_MASTER_KEY: KEY, GEX_STORE: storeFile, KBC_DATADIR: path.join(dir, 'data'), TMPDIR: dir });

  it('checks every row merged with the root (disabled ones too), secrets decrypted and masked; --request sends each first request', async () => {
    const before = await readdir(dir);
    const result = await runGexInProcess(['check', '--config-id', configId, '--request'], env());
    // the disabled row's endpoint answers 404: a run would skip it, so a check reports it and passes
    assert.equal(result.code, 0, result.stdout + result.stderr);
    // the root's outputBucket names the bucket of every manifest: the tables go there, not to the default bucket
    assert.match(
      result.stdout,
      /Row 3 of 3: users Users: valid\n {2}tables → in\.c-b\.<table> \(the manifests' destination, from outputBucket\)\n {2}job "users": first request\n {4}GET http:\/\/127\.0\.0\.1:\d+\/api\/users\?per=5\n {4}X-Key: \[hidden\]/,
    );
    assert.match(
      result.stdout,
      /^Row 1 of 3: off \(disabled\): valid\n {2}\(a run skips this disabled row: what is wrong with it does not fail the check\)$/m,
    );
    assert.match(result.stdout, /^Result: OK \(1 warning; problems of 1 disabled row not counted: a run skips it\)$/m);
    const json = JSON.parse(
      (await runGexInProcess(['check', '--config-id', configId, '--request', '--json'], env())).stdout,
    );
    assert.equal(json.ok, true);
    assert.deepEqual(
      json.units.map((u: { rowId: string; runs: boolean }) => `${u.rowId} ${u.runs}`),
      ['off false', 'typo true', 'users true'],
    );
    // the disabled row named by --row-id runs, so it counts: its 404 fails the check
    const named = await runGexInProcess(['check', '--config-id', configId, '--request', '--row-id', 'off'], env());
    assert.equal(named.code, 1, named.stdout);
    assert.match(named.stdout, /\[404\] Not Found[\s\S]*^Result: FAILED$/m);
    assert.match(
      result.stdout,
      /Row 2 of 3: typo Typo: valid\n {2}warning: Unknown key parameters\.config\.jobs\[0\]\.dataFeild \(ignored\): did you mean "dataField"\?/,
    );
    assert.match(result.stdout, /Row 1 of 3: off \(disabled\): valid[\s\S]*\[404\] Not Found[\s\S]*Row 2 of 3/);
    assert.match(result.stdout, /-> 200 OK in \d+ ms, \d+ bytes, 1 record\n {4}table b\.users: "id", "name"/);
    assert.ok(!(result.stdout + result.stderr).includes(SECRET));
    assert.equal(server.requests.at(-1)!.headers['x-key'], SECRET, 'the decrypted secret was sent');
    assert.deepEqual(await readdir(dir), before, 'no data folder, no lock, no temporary folder');

    const one = await runGexInProcess(['check', '--config-id', configId, '--row-id', 'users', '--json'], env());
    assert.equal(one.code, 0, one.stderr);
    assert.deepEqual(
      JSON.parse(one.stdout).units.map((u: { rowId: string }) => u.rowId),
      ['users'],
    );
  });

  it('gex run --dry-run: the rows a run would run, nothing sent, nothing written', async () => {
    const before = await readdir(dir);
    const requests = server.requests.length;
    const result = await runGexInProcess(['run', '--dry-run', '--config-id', configId], env());
    assert.equal(result.code, 0, result.stderr);
    // rows in the configuration's order (no rowsSortOrder: by id), the disabled one skipped
    assert.match(result.stdout, /^Row 1 of 2: typo Typo: valid$/m);
    assert.match(result.stdout, /^Row 2 of 2: users Users: valid$/m);
    assert.doesNotMatch(result.stdout, /off/);
    assert.equal(server.requests.length, requests);
    assert.deepEqual(await readdir(dir), before);
  });

  it('an unknown row or configuration: exit 1 naming what exists; a missing store is not created', async () => {
    const row = await runGexInProcess(['check', '--config-id', configId, '--row-id', 'nope'], env());
    assert.equal(row.code, 1);
    assert.match(
      row.stderr,
      /Row "nope" not found in configuration .*Existing rows: off, typo \(Typo\), users \(Users\)/,
    );
    const missing = path.join(dir, 'absent.sqlite');
    const store = await runGexInProcess(['check', '--config-id', configId, '--store', missing], env());
    assert.equal(store.code, 1);
    assert.match(store.stderr, /No store at/);
    assert.deepEqual(
      (await readdir(dir)).filter((f) => f.startsWith('absent')),
      [],
    );
  });
});
