import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { fromPlain } from '../../src/json/index.js';
import { phpUrlencode } from '../../src/php/index.js';
import { COMPONENT_CIPHER_PREFIX } from '../../src/store/encryption.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { startServe } from '../support/cli.js';
import { runGexInProcess } from '../support/in-process-gex.js';
import { assertNoSecret } from '../support/secret-forms.js';

const KEY = '6b'.repeat(32);
const PLAIN = `Rg5Mv2Xy-image/"é secret`;
const ID = 'keboola.ex-secretive';

describe('gex run: image parameters from the component registry', function () {
  this.timeout(30000);
  let server: FixtureServer;
  let dir: string;

  before(async () => {
    server = await startFixtureServer({
      handler: (r) => (r.url.startsWith('/api/items') ? { body: [{ id: 1 }] } : undefined),
    });
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-image-params-'));
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('imports # image parameters encrypted (gex components import); the run decrypts them in memory, masks them and keeps the cipher in config.json', async () => {
    const storeFile = path.join(dir, 'store.sqlite');
    const env = { GEX_MASTER_KEY: KEY, GEX_STORE: storeFile };
    const file = path.join(dir, 'components.json');
    await writeFile(
      file,
      JSON.stringify([
        { id: ID, type: 'extractor', name: 'Secretive', data: { image_parameters: { '#secret': PLAIN } } },
      ]),
    );
    const imported = await runGexInProcess(['components', 'import', file], env);
    assert.equal(imported.code, 0, imported.stderr);
    assert.ok(
      !(await readFile(storeFile)).toString('utf8').includes('Rg5Mv2Xy'),
      'the database file holds no plaintext',
    );

    const backend = await openEmbeddedStore(storeFile, env);
    // the same value in a plain parameter: the run's logs can hide it only if the runner decrypted
    // the image parameter and registered its plaintext
    const c = await (
      await backend.localSession()
    ).createConfiguration(ID, {
      name: 'image params',
      configuration: fromPlain({
        parameters: {
          api: { baseUrl: `${server.url}/api/` },
          config: { jobs: [{ endpoint: 'items', params: { q: PLAIN } }] },
        },
      }),
    });
    await backend.close();

    const data = path.join(dir, 'data');
    const result = await runGexInProcess(
      ['run', '--config-id', c.id, '--component-id', ID, '--log-level', 'debug', '--data-dir', data],
      env,
    );
    assert.equal(result.code, 0, result.stderr);
    assert.ok(
      server.requests.some((r) => r.url === `/api/items?q=${phpUrlencode(PLAIN)}`),
      'the request was sent with the value',
    );
    assert.match(result.stdout, /GET http:\/\/127\.0\.0\.1:\d+\/api\/items\?q=\[hidden\]/);
    assertNoSecret(result.stdout + result.stderr, PLAIN, ['Rg5Mv2Xy'], 'run output');
    const config = JSON.parse(await readFile(path.join(data, 'config.json'), 'utf8'));
    assert.ok(config.image_parameters['#secret'].startsWith(COMPONENT_CIPHER_PREFIX), 'config.json keeps the cipher');
  });

  it('against a gex server: a runner token gets image parameters decrypted by the server; another token passes them on as ciphers and the run still works', async () => {
    const storeFile = path.join(dir, 'served.sqlite');
    const key = { GEX_MASTER_KEY: KEY };
    const file = path.join(dir, 'components-served.json');
    await writeFile(
      file,
      JSON.stringify([{ id: ID, type: 'extractor', data: { image_parameters: { '#secret': PLAIN } } }]),
    );
    assert.equal((await runGexInProcess(['components', 'import', file, '--store', storeFile], key)).code, 0);
    const tokenOf = async (...flags: string[]) =>
      (
        await runGexInProcess(['tokens', 'create', '--description', 'runner', ...flags, '--store', storeFile], key)
      ).stdout.trim();
    const token = await tokenOf();
    const runner = await tokenOf('--runner');
    const backend = await openEmbeddedStore(storeFile, key);
    const info = (await backend.authenticate(token))!;
    const c = await backend.session(info).createConfiguration(ID, {
      name: 'served',
      configuration: fromPlain({
        parameters: {
          api: { baseUrl: `${server.url}/api/` },
          config: { jobs: [{ endpoint: 'items', params: { q: PLAIN } }] },
        },
      }),
    });
    await backend.close();
    const served = await startServe(['--store', storeFile], key);
    try {
      const detail = await (await fetch(`${served.url}/v2/storage/components/${ID}`)).text();
      assert.ok(!detail.includes('Rg5Mv2Xy') && detail.includes(COMPONENT_CIPHER_PREFIX), 'served as a cipher');
      const args = (as: string) => [
        'run',
        '--config-id',
        c.id,
        '--component-id',
        ID,
        '--store',
        served.url,
        '--token',
        as,
        '--log-level',
        'debug',
      ];
      const noKey = { GEX_MASTER_KEY: '' };
      const byRunner = await runGexInProcess([...args(runner), '--data-dir', path.join(dir, 'served-data')], noKey);
      assert.equal(byRunner.code, 0, byRunner.stderr);
      assert.match(byRunner.stdout, /items\?q=\[hidden\]/, 'decrypted by the server and registered with the masker');
      assertNoSecret(byRunner.stdout + byRunner.stderr, PLAIN, ['Rg5Mv2Xy'], 'run output');
      const withoutKey = await runGexInProcess([...args(token), '--data-dir', path.join(dir, 'served-data-2')], noKey);
      assert.equal(withoutKey.code, 0, withoutKey.stderr);
      const config = JSON.parse(await readFile(path.join(dir, 'served-data-2', 'config.json'), 'utf8'));
      assert.ok(config.image_parameters['#secret'].startsWith(COMPONENT_CIPHER_PREFIX));
    } finally {
      served.child.kill();
    }
  });
});
