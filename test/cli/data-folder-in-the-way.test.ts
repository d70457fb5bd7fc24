import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runGexInProcess } from '../support/in-process-gex.js';
import { TEST_KEY } from '../support/store.js';

/**
 * A data folder gex cannot create because a file is in its path — the folder itself, a folder
 * above it, a folder inside it gex needs (rows, out) — is a user error (exit 1) naming the
 * folder and the file in the way, for every kind of run; never exit 2 with ENOTDIR or EEXIST.
 */
describe('gex run: a file where the data folder (or a folder in it) should be', function () {
  this.timeout(60_000);
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let file: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-in-the-way-'));
    env = { ...TEST_KEY, GEX_STORE: path.join(dir, 'store.sqlite'), KBC_URL: '', KBC_TOKEN: '', KBC_DATADIR: '' };
    file = path.join(dir, 'a-file');
    await writeFile(file, 'not a folder');
    const created = await runGexInProcess(
      [
        'configs',
        'create',
        '--name',
        'Shop',
        '--config-id',
        'shop',
        '--set',
        'parameters.api.baseUrl=http://127.0.0.1:1/',
        '--set',
        'parameters.config.jobs=[{"endpoint":"users"}]',
      ],
      env,
    );
    assert.equal(created.code, 0, created.output);
    const row = await runGexInProcess(['rows', 'add', 'shop', '--row-id', 'users'], env);
    assert.equal(row.code, 0, row.output);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  for (const [what, dataDir] of [
    ['below a file', () => path.join(file, 'data')],
    ['a file itself', () => file],
  ] as const) {
    it(`gex run --config-id with the data folder ${what}: exit 1 naming both`, async () => {
      const r = await runGexInProcess(['run', '--config-id', 'shop', '--data-dir', dataDir()], env);
      assert.equal(r.code, 1, r.output);
      assert.match(
        r.output,
        new RegExp(
          `Cannot create the data folder ${dataDir().replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is a file, not a folder\\. Move it away, or point --data-dir at another folder\\.`,
        ),
      );
      assert.doesNotMatch(r.output, /Application error|ENOTDIR|EEXIST/);
    });
  }

  it('a file named rows or out inside the data folder: exit 1 naming it', async () => {
    const data = path.join(dir, 'data');
    await mkdir(data, { recursive: true });
    await writeFile(path.join(data, 'rows'), '');
    const stored = await runGexInProcess(['run', '--config-id', 'shop', '--data-dir', data], env);
    assert.equal(stored.code, 1, stored.output);
    assert.match(stored.output, /rows.* is a file|gex needs a folder there and it is a file/);
    assert.doesNotMatch(stored.output, /Application error|ENOTDIR|EEXIST/);
    await writeFile(
      path.join(data, 'config.json'),
      JSON.stringify({
        parameters: { api: { baseUrl: 'http://127.0.0.1:1/' }, config: { jobs: [{ endpoint: 'x' }] } },
      }),
    );
    await writeFile(path.join(data, 'out'), '');
    const folder = await runGexInProcess(['run', '--data-dir', data], env);
    assert.equal(folder.code, 1, folder.output);
    assert.match(folder.output, /out.* is a file|gex needs a folder there and it is a file/);
    assert.doesNotMatch(folder.output, /Application error|ENOTDIR|EEXIST/);
    // nothing was left behind in the data folder but what was there and the run's lock file, released
    assert.deepEqual((await readdir(data)).filter((f) => f !== '.gex-run.lock').sort(), ['config.json', 'out', 'rows']);
  });

  it('gex run and gex check --data-dir below a file: exit 1 naming the file in the way', async () => {
    for (const command of ['run', 'check']) {
      const r = await runGexInProcess([command, '--data-dir', path.join(file, 'data')], env);
      assert.equal(r.code, 1, r.output);
      assert.match(
        r.output,
        new RegExp(`config\\.json: ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is a file, not a folder`),
      );
      assert.doesNotMatch(r.output, /ENOTDIR/);
    }
  });
});
