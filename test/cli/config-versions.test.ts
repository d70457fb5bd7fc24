import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SECRET, StoreCli } from '../support/store-cli.js';
import { TEST_KEY } from '../support/store.js';

/** `gex configs get ID --version N` and `gex configs diff ID FROM [TO]`: old versions read and compared. */
describe('gex configs: reading and comparing old versions', function () {
  this.timeout(60_000);
  let dir: string;
  let cli: StoreCli;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-versions-'));
    cli = new StoreCli({ ...TEST_KEY, GEX_STORE: path.join(dir, 'store.sqlite'), KBC_URL: '', KBC_TOKEN: '' });
    await cli.ok([
      'configs',
      'create',
      '--name',
      'Shop',
      '--config-id',
      'shop',
      '--set',
      'parameters.api.baseUrl=https://a.example/',
    ]);
    await cli.ok([
      'configs',
      'edit',
      'shop',
      '--set',
      'parameters.api.baseUrl=https://b.example/',
      '--set',
      `parameters.#token=${SECRET}`,
    ]);
    await cli.ok([
      'rows',
      'add',
      'shop',
      '--row-id',
      'users',
      '--set',
      'parameters.config.jobs=[{"endpoint":"users"}]',
    ]);
    await cli.ok(['configs', 'edit', 'shop', '--name', 'Shop 2']);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('prints version N with --version, not the version of gex; the current configuration without it', async () => {
    const first = await cli.json(['configs', 'get', 'shop', '--version', '1']);
    assert.equal(first.version, 1);
    assert.equal(first.name, 'Shop');
    assert.equal(first.configuration.parameters.api.baseUrl, 'https://a.example/');
    assert.deepEqual(first.rows, []);
    const third = await cli.json(['configs', 'get', 'shop', '--version', '3']);
    assert.deepEqual(
      third.rows.map((r: { id: string }) => r.id),
      ['users'],
    );
    const current = await cli.json(['configs', 'get', 'shop']);
    assert.equal(current.version, 4);
    assert.match(await cli.fails(['configs', 'get', 'shop', '--version', '9']), /Version 9 not found/);
    assert.match(
      await cli.fails(['configs', 'get', 'shop', '--version', '0']),
      /--version takes a whole number from 1/,
    );
  });

  it('lists what changed from one version to another (to the current one by default), secrets as "(encrypted)"', async () => {
    const lines = (await cli.ok(['configs', 'diff', 'shop', '1'])).split('\n');
    assert.deepEqual(lines.slice(0, 2), ['Configuration shop, version 1 → version 4:', '  ~ name: "Shop" → "Shop 2"']);
    assert.ok(lines.includes('  ~ configuration.parameters.api.baseUrl: "https://a.example/" → "https://b.example/"'));
    assert.ok(lines.includes('  + configuration.parameters.#token: (encrypted)'), lines.join('\n'));
    assert.ok(lines.some((l) => l.startsWith('  + rows.users: {"name":"","description":"","isDisabled":false')));
    const between = await cli.json(['configs', 'diff', 'shop', '2', '3']);
    assert.deepEqual(
      between.changes.map((c: { path: string; change: string }) => `${c.change} ${c.path}`),
      ['added rows.users'],
    );
    const json = await cli.json(['configs', 'diff', 'shop', '1', '2']);
    const token = json.changes.find((c: { path: string }) => c.path === 'configuration.parameters.#token');
    assert.equal(token.encrypted, true);
    assert.match(token.after, /^KBC::/, 'the stored cipher, as configs get prints it');
    assert.equal(
      await cli.ok(['configs', 'diff', 'shop', '2', '2']),
      'Versions 2 and 2 of configuration shop hold the same.\n',
    );
    assert.match(await cli.fails(['configs', 'diff', 'shop', 'x']), /version must be a positive integer/);
    cli.assertNoSecretLeaked();
  });
});
