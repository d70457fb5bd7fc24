import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { StoreCli } from '../support/store-cli.js';
import { TEST_KEY } from '../support/store.js';

/**
 * `gex check --config-id` looks at every row, disabled ones too — but a row a run skips never
 * fails the check: not its invalid configuration, not a secret that does not decrypt, not a first
 * request that fails. Each is reported with the row; --row-id naming the row makes it count.
 */
describe('gex check: a disabled row is reported, never fails the check', function () {
  this.timeout(60_000);
  let dir: string;
  let cli: StoreCli;
  let server: http.Server;

  before(async () => {
    server = http.createServer((req, res) => {
      if (req.url?.startsWith('/api/users')) res.end('[{"id":1}]');
      else res.writeHead(404).end('{"error":"no such endpoint"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-check-disabled-'));
    cli = new StoreCli({ ...TEST_KEY, GEX_STORE: path.join(dir, 'store.sqlite'), KBC_URL: '', KBC_TOKEN: '' }, dir);
    await cli.ok([
      'configs',
      'create',
      '--name',
      'Shop',
      '--config-id',
      'shop',
      '--set',
      `parameters.api.baseUrl=${url}`,
    ]);
    const row = (id: string, ...args: string[]) => cli.ok(['rows', 'add', 'shop', '--row-id', id, ...args, '--force']);
    await row('a-on', '--set', 'parameters.config.jobs=[{"endpoint":"users"}]');
    await row('b-gone', '--disabled', '--set', 'parameters.config.jobs=[{"endpoint":"gone"}]');
    await row(
      'c-invalid',
      '--disabled',
      '--set',
      'parameters.config.jobs=[{"endpoint":"users","params":[1]}]',
      '--set',
      'parameters.api.pagination={"method":"offset","limit":"abc"}',
    );
    await row(
      'd-cipher',
      '--disabled',
      '--set',
      `parameters.config.jobs=[{"endpoint":"users"}]`,
      '--set',
      `parameters.#k=KBC::ProjectSecure::${'A'.repeat(48)}`,
    );
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  it('passes when every row a run would run passes; what is wrong with the disabled ones is reported with them', async () => {
    const result = await cli.run(['check', '--config-id', 'shop', '--request']);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const lines = result.stdout.split('\n');
    const note = '  (a run skips this disabled row: what is wrong with it does not fail the check)';
    for (const label of [
      'Row 2 of 4: b-gone (disabled): valid',
      'Row 3 of 4: c-invalid (disabled): invalid',
      'Row 4 of 4: d-cipher (disabled): invalid',
    ])
      assert.equal(lines[lines.indexOf(label) + 1], note, label);
    assert.match(result.stdout, /\[404\] Not Found/);
    assert.match(result.stdout, /Cannot decrypt parameters\.#k of row d-cipher/);
    assert.match(result.stdout, /^Result: OK \(.*problems of 3 disabled rows not counted: a run skips them\)$/m);
    const json = JSON.parse((await cli.run(['check', '--config-id', 'shop', '--request', '--json'])).stdout);
    assert.equal(json.ok, true);
    assert.deepEqual(
      json.units.map((u: { rowId: string; runs: boolean; valid: boolean }) => [u.rowId, u.runs, u.valid]),
      [
        ['a-on', true, true],
        ['b-gone', false, true],
        ['c-invalid', false, false],
        ['d-cipher', false, false],
      ],
    );
  });

  it('counts a disabled row that --row-id names (a run runs it): exit 1', async () => {
    for (const rowId of ['b-gone', 'c-invalid', 'd-cipher']) {
      const result = await cli.run(['check', '--config-id', 'shop', '--request', '--row-id', rowId]);
      assert.equal(result.code, 1, `${rowId}: ${result.stdout}${result.stderr}`);
    }
  });
});
