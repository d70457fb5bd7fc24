import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SECRET, StoreCli } from '../support/store-cli.js';
import { sqliteBackend, TEST_KEY, type FreshStore } from '../support/store.js';
import { startGexInTerminal } from '../support/terminal.js';

/**
 * Secrets into stored configurations without putting them on the command line (shell history,
 * `ps`): from standard input, from a file, or typed at a prompt that does not echo them.
 */
describe('gex configs/rows: secrets from standard input, a file or a hidden prompt (CLI process)', function () {
  this.timeout(120_000);
  let dir: string;
  let store: FreshStore;
  let cli: StoreCli;
  const env = () => ({ ...TEST_KEY, GEX_STORE: store.location, KBC_URL: '', KBC_TOKEN: '', EDITOR: '', VISUAL: '' });

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-secrets-cli-'));
    store = await sqliteBackend.fresh();
    cli = new StoreCli(env());
    await cli.ok([
      'configs',
      'create',
      '--name',
      'shop',
      '--config-id',
      'shop',
      '--set',
      'parameters.api.baseUrl=http://x.example/',
    ]);
  });
  afterEach(async () => {
    await store.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  const stored = async (args: string[]) => JSON.parse(await cli.ok(args));

  it('--set-secret reads a piped value, --set-file a file, --file - a whole body: stored encrypted, never printed', async () => {
    await cli.ok(['configs', 'edit', 'shop', '--set-secret', 'parameters.#token'], {}, `${SECRET}\n`);
    const secretFile = path.join(dir, 'password.txt');
    await writeFile(secretFile, `${SECRET}\n`, { mode: 0o600 });
    await cli.ok([
      'rows',
      'add',
      'shop',
      '--row-id',
      'users',
      '--set',
      'parameters.config.jobs[0].endpoint=users',
      '--set-file',
      `parameters.config.#password=${secretFile}`,
    ]);
    await cli.ok(
      ['rows', 'add', 'shop', '--row-id', 'orders', '--file', '-'],
      {},
      JSON.stringify({ parameters: { config: { jobs: [{ endpoint: 'orders' }], '#password': SECRET } } }),
    );
    await cli.ok(
      ['rows', 'edit', 'shop', '--row-id', 'orders', '--set-secret', 'parameters.config.#other'],
      {},
      SECRET,
    );

    const config = await stored(['configs', 'get', 'shop']);
    assert.match(config.configuration.parameters['#token'], /^KBC::ProjectSecure::/);
    const [users, orders] = ['users', 'orders'].map(
      (id) => config.rows.find((r: { id: string }) => r.id === id).configuration.parameters.config,
    );
    assert.match(users['#password'], /^KBC::ProjectSecure::/);
    assert.match(orders['#password'], /^KBC::ProjectSecure::/);
    assert.match(orders['#other'], /^KBC::ProjectSecure::/);
    // the same secret again is no change
    assert.match(
      await cli.ok(['configs', 'edit', 'shop', '--set-secret', 'parameters.#token'], {}, SECRET),
      /No change/,
    );
    cli.assertNoSecretLeaked();
  });

  it('refuses, in one line and without the value: a plain key, two readers of standard input, an empty value', async () => {
    const before = await cli.ok(['configs', 'get', 'shop']);
    for (const [args, input, pattern] of [
      [
        ['configs', 'edit', 'shop', '--set-secret', 'parameters.token'],
        SECRET,
        /--set-secret parameters\.token: the last key must start with "#"/,
      ],
      [
        ['configs', 'edit', 'shop', '--file', '-', '--set-secret', 'parameters.#t'],
        SECRET,
        /--file - and --set-secret parameters\.#t both read standard input/,
      ],
      [
        ['configs', 'edit', 'shop', '--set-secret', 'parameters.#t'],
        '',
        /the value is empty \(nothing came on standard input\)/,
      ],
    ] as const) {
      const stderr = await cli.fails([...args], {}, input);
      assert.match(stderr, pattern);
      assert.equal(stderr.trim().split('\n').length, 1, stderr);
    }
    assert.equal(await cli.ok(['configs', 'get', 'shop']), before);
    cli.assertNoSecretLeaked();
  });

  it('at a terminal, asks without echoing what is typed', async function () {
    const gex = startGexInTerminal(['configs', 'edit', 'shop', '--set-secret', 'parameters.#token'], env(), 120, {
      input: true,
    });
    await gex.waitFor(/Value of parameters\.#token \(not shown\): /);
    gex.child.stdin!.write(`${SECRET}\r`);
    const { code } = await gex.exited;
    assert.equal(code, 0, gex.output());
    assert.match(gex.output(), /is now version 2/);
    assert.ok(!gex.output().includes(SECRET), `the terminal showed the secret: ${JSON.stringify(gex.output())}`);
    assert.match(
      (await stored(['configs', 'get', 'shop'])).configuration.parameters['#token'],
      /^KBC::ProjectSecure::/,
    );
  });
});
