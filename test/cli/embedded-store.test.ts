import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { runGexInProcess } from '../support/in-process-gex.js';
import { storeBackends, TEST_KEY, type FreshStore } from '../support/store.js';

/**
 * Every store command on the embedded store of each backend, named by `--store` or GEX_STORE:
 * components import, configs import/get, and `gex run --config-id`, which reads the
 * configuration and saves the rows' state back into the same database.
 */
for (const backend of storeBackends()) {
  describe(`gex CLI on an embedded ${backend.name} store`, function () {
    this.timeout(60_000);
    let api: FixtureServer;
    let dir: string;
    let store: FreshStore;

    before(async () => {
      api = await startFixtureServer({
        handler: (r) => (r.url.startsWith('/api/users') ? { body: [{ id: 1, '#pw': 'x' }] } : undefined),
      });
      dir = await mkdtemp(path.join(os.tmpdir(), 'gex-embedded-cli-'));
      store = await backend.fresh();
    });
    after(async () => {
      await api.close();
      await store.dispose();
      await rm(dir, { recursive: true, force: true });
    });

    it('imports components and a configuration, runs it by id and saves its state', async () => {
      const env = { ...TEST_KEY, GEX_STORE: store.location };
      await writeFile(
        path.join(dir, 'components.json'),
        JSON.stringify([{ id: 'keboola.ex-custom', type: 'extractor' }]),
      );
      const components = await runGexInProcess(['components', 'import', path.join(dir, 'components.json')], env);
      assert.equal(components.code, 0, components.stderr);
      assert.match(components.stdout, /Registered 1 component: keboola\.ex-custom/);

      const document = {
        name: 'Users',
        configuration: { parameters: { api: { baseUrl: `${api.url}/api/` }, config: { outputBucket: 'cli' } } },
        rows: [
          {
            rowId: 'users',
            name: 'Users',
            configuration: { parameters: { config: { jobs: [{ endpoint: 'users', params: { '#token': 'hush' } }] } } },
          },
        ],
      };
      await writeFile(path.join(dir, 'config.json'), JSON.stringify(document));
      const imported = await runGexInProcess(
        ['configs', 'import', path.join(dir, 'config.json'), '--store', store.location, '--json'],
        TEST_KEY,
      );
      assert.equal(imported.code, 0, imported.stderr);
      const configId = (JSON.parse(imported.stdout) as { id: string }).id;
      assert.ok(!imported.stdout.includes('hush'), 'the secret is stored encrypted');

      const run = await runGexInProcess(['run', '--config-id', configId], {
        ...env,
        KBC_DATADIR: path.join(dir, 'data'),
      });
      assert.equal(run.code, 0, run.stderr);
      assert.equal(
        await readFile(path.join(dir, 'data/rows/users/out/tables/cli.users'), 'utf8'),
        '"id","pw"\n"1","x"\n',
      );
      assert.ok(
        api.requests.some((r) => r.url.includes('%23token=hush')),
        'the runner decrypted the secret',
      );

      const shown = await runGexInProcess(['configs', 'get', configId, '--json'], env);
      assert.equal(shown.code, 0, shown.stderr);
      const stored = JSON.parse(shown.stdout) as {
        version: number;
        changeDescription: string;
        rows: Array<{ state: { component?: { time?: object } } }>;
      };
      assert.ok(stored.rows[0].state.component?.time, 'the run saved the row state into the store');
      assert.equal(stored.version, 1, 'the import is one version; saving state made none');
      assert.equal(stored.changeDescription, 'Imported from a file');
    });
  });
}
