import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SECRET, StoreCli } from '../support/store-cli.js';
import { useTestServer } from '../support/storage-api-server.js';
import { TEST_KEY } from '../support/store.js';

/**
 * The main paths of the store commands against a remote Storage API (a gex server), named by
 * KBC_URL and KBC_TOKEN as `gex run` takes them: there is no transaction there, so a failed
 * import undoes what it created.
 */
describe('gex configs, rows and state commands on a Storage API (KBC_URL, KBC_TOKEN)', function () {
  this.timeout(120_000);
  const server = useTestServer();
  let dir: string;
  let cli: StoreCli;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-remote-cli-'));
    // GEX_STORE names a file that must not be used: KBC_URL wins
    cli = new StoreCli({
      ...TEST_KEY,
      GEX_STORE: path.join(dir, 'unused.sqlite'),
      KBC_URL: server().baseUrl,
      KBC_TOKEN: server().token,
      EDITOR: '',
      VISUAL: '',
    });
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('creates, edits as one version, manages rows and state, exports and re-imports', async () => {
    const created = await cli.json([
      'configs',
      'create',
      '--name',
      'remote',
      '--config-id',
      'r1',
      '--set',
      'parameters.api.baseUrl=http://x/',
      '--set',
      `parameters.#password=${SECRET}`,
    ]);
    assert.equal(created.id, 'r1');
    assert.match(created.configuration.parameters['#password'], /^KBC::ProjectSecure::/);
    assert.match(
      await cli.ok([
        'configs',
        'edit',
        'r1',
        '--set',
        'parameters.api.baseUrl=http://y/',
        '--set',
        'parameters.config.outputBucket=b',
      ]),
      /now version 2 \(changed: parameters\.api\.baseUrl, parameters\.config\)/,
    );

    await cli.ok([
      'rows',
      'add',
      'r1',
      '--row-id',
      '../../x',
      '--name',
      'odd\nrow',
      '--set',
      'parameters.config.jobs[0].endpoint=users',
    ]);
    await cli.ok(['rows', 'add', 'r1', '--row-id', 'second']);
    assert.deepEqual((await cli.json(['rows', 'move', 'r1', 'second', '--first'])).rowsSortOrder, [
      'second',
      '../../x',
    ]);
    await cli.ok(['rows', 'disable', 'r1', '--row-id', 'second,../../x']);
    assert.deepEqual(
      (await cli.json(['rows', 'list', 'r1'])).map((r: { isDisabled: boolean }) => r.isDisabled),
      [true, true],
    );
    assert.match(
      await cli.ok(['rows', 'edit', 'r1', '--row-id', '../../x', '--set', 'parameters.config.jobs[0].endpoint=orders']),
      /is now version 3/,
    );
    assert.deepEqual(JSON.parse(await cli.ok(['state', 'show', 'r1', '--row-id', '../../x'])), {});
    assert.match(
      await cli.ok(['state', 'reset', 'r1', '--row-id', 'second,../../x']),
      /State of rows second, \.\.\/\.\.\/x of configuration r1 reset to \{\}/,
    );

    const exported = await cli.ok(['configs', 'export', 'r1']);
    assert.ok(!exported.includes(SECRET));
    await cli.ok(['configs', 'delete', 'r1']);
    await cli.ok(['configs', 'purge', 'r1', '--yes']);
    const file = path.join(dir, 'r1.json');
    await writeFile(file, exported);
    await cli.ok(['configs', 'import', file]);
    assert.equal(
      await cli.ok(['configs', 'export', 'r1']),
      exported,
      'export → import → export round-trips through the Storage API',
    );

    const missing = await cli.fails(['configs', 'get', 'nope']);
    assert.ok(
      missing.includes(`(looked for configuration nope of component ex-generic-v2 in the store ${server().baseUrl})`),
      missing,
    );
    cli.assertNoSecretLeaked();
  });

  it('undoes a failed import: the configuration created before the failing row is deleted and purged', async () => {
    const file = path.join(dir, 'broken.json');
    await writeFile(
      file,
      JSON.stringify({ name: 'half', configurationId: 'half', rows: [{ rowId: 'a' }, { rowId: 'b' }, { rowId: 'a' }] }),
    );
    const stderr = await cli.fails(['configs', 'import', file]);
    assert.match(
      stderr,
      /Import failed at rows\[2\] \(id a\): .*The configuration half created so far was removed again \(deleted and purged\)/,
    );
    const all = [...(await cli.json(['configs', 'list'])), ...(await cli.json(['configs', 'list', '--deleted']))];
    assert.ok(!all.some((c: { id: string }) => c.id === 'half'), 'nothing of the failed import is left');
  });

  it('imports a taken id with --new-id, and refuses --replace (a Storage API cannot change rows and configuration in one version)', async () => {
    const file = path.join(dir, 'shop.json');
    await writeFile(file, JSON.stringify({ name: 'shop', configurationId: 'shop', rows: [{ rowId: 'a' }] }));
    await cli.ok(['configs', 'import', file]);
    assert.match(
      await cli.fails(['configs', 'import', file]),
      /Configuration shop already exists\. Nothing was imported\. To import it anyway: --new-id/,
    );
    assert.notEqual((await cli.json(['configs', 'import', file, '--new-id'])).id, 'shop');
    const versions = await cli.json(['configs', 'versions', 'shop']);
    const stderr = await cli.fails(['configs', 'import', file, '--replace']);
    assert.match(
      stderr,
      /^Error: --replace needs the embedded store \(SQLite or PostgreSQL\): a Storage API changes one row per call/,
    );
    assert.deepEqual(await cli.json(['configs', 'versions', 'shop']), versions, 'nothing changed');
  });

  it('refuses token and registry management on a Storage API', async () => {
    assert.match(await cli.fails(['tokens', 'list']), /Tokens live in the embedded store: pass --store/);
    assert.match(await cli.ok(['components', 'show', 'ex-generic-v2']), /^ex-generic-v2\textractor/);
  });
});
