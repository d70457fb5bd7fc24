import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { runGex, startServe } from '../support/cli.js';

/**
 * The documented flow on a fresh store, every step a real `gex` process: create a token, register
 * a component, serve the store, manage configurations over HTTP with `gex configs`, and run one
 * with KBC_URL / KBC_TOKEN / KBC_CONFIGID and a runner token, no key — the container's usage —
 * saving state through the API.
 */
describe('gex serve + tokens + components + configs + run against the HTTP store', function () {
  this.timeout(60_000);
  let dir: string;
  let api: FixtureServer;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-e2e-'));
    api = await startFixtureServer({
      handler: (r) => {
        const page = Number(new URL(r.url, 'http://x').searchParams.get('page'));
        return r.url.startsWith('/v1/users') ? { body: { data: page <= 2 ? [{ id: page, '#x': 1 }] : [] } } : undefined;
      },
    });
  });
  after(async () => {
    await api.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('works end to end', async () => {
    const store = path.join(dir, 'store.sqlite');
    const key = { GEX_MASTER_KEY: '55'.repeat(32) };

    const token = await runGex(['tokens', 'create', '--description', 'e2e', '--store', store], key);
    assert.equal(token.code, 0, token.stderr);
    const secret = token.stdout.trim();
    assert.match(secret, /^\d+-\d+-[\w-]{40}$/);
    const readOnly = (
      await runGex(['tokens', 'create', '--description', 'viewer', '--read-only', '--store', store], key)
    ).stdout.trim();
    const runner = await runGex(['tokens', 'create', '--description', 'runner', '--runner', '--store', store], key);
    assert.match(runner.stderr, /\(runner: receives the project's secrets decrypted\)/);

    await writeFile(
      path.join(dir, 'components.json'),
      JSON.stringify([{ id: 'keboola.ex-custom', type: 'extractor', name: 'Custom' }]),
    );
    const imported = await runGex(['components', 'import', path.join(dir, 'components.json'), '--store', store], key);
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stdout, /Registered 1 component: keboola\.ex-custom/);

    const served = await startServe(['--store', store], key);
    try {
      const url = served.url;
      const document = {
        name: 'Users',
        configuration: {
          parameters: {
            api: { baseUrl: `${api.url}/v1/`, pagination: { method: 'pagenum' } },
            config: { outputBucket: 'e2e' },
          },
        },
        rows: [
          {
            rowId: 'users',
            name: 'Users',
            configuration: {
              parameters: {
                config: { jobs: [{ endpoint: 'users', dataField: 'data', params: { '#key': 'top-secret' } }] },
              },
            },
          },
          { rowId: 'off', isDisabled: true, configuration: {} },
        ],
      };
      await writeFile(path.join(dir, 'config.json'), JSON.stringify(document));
      const remote = { ...key, KBC_TOKEN: secret };
      const created = await runGex(
        ['configs', 'import', path.join(dir, 'config.json'), '--store', url, '--json'],
        remote,
      );
      assert.equal(created.code, 0, created.stderr);
      const configId = (JSON.parse(created.stdout) as { id: string }).id;
      assert.ok(!created.stdout.includes('top-secret'), 'the server encrypted the secret');

      const denied = await runGex(['configs', 'state-reset', configId, '--store', url], {
        ...key,
        KBC_TOKEN: readOnly,
      });
      assert.equal(denied.code, 1);
      assert.match(denied.stderr, /don't have access/);

      // the runner holds the URL and a runner token, no master key: the server decrypts for it
      const run = await runGex(['run', '--summary', path.join(dir, 'summary.json')], {
        GEX_MASTER_KEY: '',
        KBC_TOKEN: runner.stdout.trim(),
        KBC_URL: url,
        KBC_CONFIGID: configId,
        KBC_DATADIR: path.join(dir, 'data'),
      });
      assert.equal(run.code, 0, run.stderr + run.stdout);
      assert.ok(!(run.stdout + run.stderr).includes('top-secret'));
      assert.equal(
        await readFile(path.join(dir, 'data/rows/users/out/tables/e2e.users'), 'utf8'),
        '"id","x"\n"1","1"\n"2","1"\n',
      );
      assert.ok(
        api.requests.some((r) => r.url.includes('%23key=top-secret')),
        'the API received the decrypted secret',
      );

      const versions = await runGex(['configs', 'versions', configId, '--store', url], remote);
      assert.match(versions.stdout, /^3\t.*\tRow off added\n2\t.*\tRow users added\n1\t.*\tImported from a file\n$/);

      const shown = await runGex(['configs', 'get', configId, '--store', url, '--json'], remote);
      const saved = JSON.parse(shown.stdout) as {
        rows: Array<{ id: string; state: { component?: { time?: { previousStart: number } } } }>;
      };
      assert.ok(
        saved.rows.find((r) => r.id === 'users')!.state.component!.time!.previousStart > 0,
        'state saved through the API',
      );

      const reset = await runGex(['configs', 'state-reset', configId, '--row-id', 'users', '--store', url], remote);
      assert.equal(reset.code, 0, reset.stderr);
      const copy = await runGex(['configs', 'copy', configId, '2', '--name', 'Copy', '--store', url], remote);
      assert.match(copy.stdout, /Created configuration \d+ "Copy" from version 2/, copy.stderr);
      const rollback = await runGex(['configs', 'rollback', configId, '2', '--store', url], remote);
      assert.match(rollback.stdout, /rolled back to version 2: now version 4/);
      const list = await runGex(['configs', 'list', '--store', url], remote);
      assert.match(list.stdout, /Users\tversion 4, 1 rows/);
    } finally {
      served.child.kill('SIGTERM');
    }
  });
});
