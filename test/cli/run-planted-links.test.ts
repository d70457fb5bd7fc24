import assert from 'node:assert/strict';
import { cp, lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { fromPlain } from '../../src/json/index.js';
import type { CliResult } from '../support/cli.js';
import { runGexInProcess } from '../support/in-process-gex.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { Outside, type PlantedLink } from '../support/outside.js';

const KEY = { GEX_MASTER_KEY: '7c'.repeat(32) };
const C = 'ex-generic-v2';

/** The refusal as the user sees it: exit 1, one line naming the link, no stack trace. */
function assertRefused(result: CliResult, link: string, what: string): void {
  const output = result.stdout + result.stderr;
  assert.equal(result.code, 1, `${what}: ${output}`);
  assert.ok(output.includes(`Refusing to use ${link}: it is a symbolic link`), `${what}: ${output}`);
  assert.match(output, /Remove the link/);
  assert.doesNotMatch(output, /\n\s+at |Application error/, `${what}: no stack trace`);
}

/**
 * Links planted in a data folder, against real `gex run` processes: `--config-id` runs (rows/, a
 * row's folder, in/, in/state.json and config.json of a configuration without rows, the run lock,
 * a summary file in the data folder) and every path of a `--data-dir` run. Each is refused before
 * any request, naming the link, and nothing outside the data folder changes.
 */
describe('gex run: a symbolic link planted in the data folder (CLI)', function () {
  this.timeout(120_000);
  let server: FixtureServer;
  let dir: string;
  let storeFile: string;
  let outside: Outside;

  before(async () => {
    server = await startFixtureServer({
      handler: (r) => (r.url.startsWith('/api/') ? { body: [{ id: 1 }] } : undefined),
    });
  });
  after(() => server.close());

  beforeEach(async () => {
    server.requests.length = 0;
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-run-links-'));
    storeFile = path.join(dir, 'store.sqlite');
    const backend = await openEmbeddedStore(storeFile, KEY);
    try {
      const store = await backend.localSession();
      const root = fromPlain({
        parameters: {
          api: { baseUrl: `${server.url}/api/` },
          config: { outputBucket: 'b', jobs: [{ endpoint: 'users' }] },
        },
      });
      await store.createConfiguration(C, { name: 'rows', configurationId: 'rows', configuration: root });
      await store.createRow(C, 'rows', { rowId: 'users', configuration: fromPlain({}) });
      await store.createConfiguration(C, { name: 'no rows', configurationId: 'plain', configuration: root });
    } finally {
      await backend.close();
    }
    outside = new Outside(path.join(dir, 'outside'));
    await outside.create();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const runConfig = (configId: string, dataDir: string, ...more: string[]) =>
    runGexInProcess(['run', '--config-id', configId, '--store', storeFile, '--data-dir', dataDir, ...more], KEY);

  const cases: Array<{ configId: string; planted: string; kind: PlantedLink }> = [
    { configId: 'rows', planted: 'rows', kind: 'dir' },
    { configId: 'rows', planted: 'rows', kind: 'dangling' },
    { configId: 'rows', planted: 'rows/users', kind: 'dir' },
    { configId: 'plain', planted: 'in', kind: 'dir' },
    { configId: 'plain', planted: 'in', kind: 'dangling' },
    { configId: 'plain', planted: 'in/state.json', kind: 'file' },
    { configId: 'plain', planted: 'config.json', kind: 'file' },
    { configId: 'plain', planted: 'config.json', kind: 'dangling' },
    { configId: 'plain', planted: 'out', kind: 'dir' },
    { configId: 'plain', planted: 'out/tables', kind: 'dir' },
  ];
  for (const { configId, planted, kind } of cases) {
    it(`--config-id ${configId}: ${planted} linked to ${kind === 'dangling' ? 'nothing' : `a ${kind} outside`} is refused, nothing outside changes`, async () => {
      const dataDir = path.join(dir, 'data');
      await mkdir(dataDir);
      const link = path.join(dataDir, planted);
      await outside.plant(link, kind);
      const before = await outside.snapshot();
      const result = await runConfig(configId, dataDir);
      assertRefused(result, link, planted);
      assert.deepEqual(await outside.snapshot(), before);
      assert.equal(server.requests.length, 0, 'no request was sent');
      assert.ok((await lstat(link)).isSymbolicLink(), 'the link is left for the user');
    });
  }

  it('--config-id: a run lock planted as a link is neither read through nor removed', async () => {
    const dataDir = path.join(dir, 'data');
    await mkdir(dataDir);
    await writeFile(outside.file, JSON.stringify({ pid: 1, host: 'secret-host-name', since: 'x' }));
    await outside.plant(path.join(dataDir, '.gex-run.lock'), 'file');
    const before = await outside.snapshot();
    const result = await runConfig('rows', dataDir);
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      /The lock file .*\/data\/\.gex-run\.lock is a symbolic link, which gex neither reads nor removes/,
    );
    assert.doesNotMatch(result.stdout + result.stderr, /secret-host-name/, 'the file the link points to is not read');
    assert.deepEqual(await outside.snapshot(), before);
    assert.equal(server.requests.length, 0);
  });

  it('--config-id: a summary file named in the data folder is not written through a link planted there', async () => {
    const dataDir = path.join(dir, 'data');
    await mkdir(dataDir);
    const summary = path.join(dataDir, 'summary.json');
    await outside.plant(summary, 'file');
    const before = await outside.snapshot();
    const result = await runConfig('rows', dataDir, '--summary', summary);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout + result.stderr,
      /Cannot write the summary to .*summary\.json: Refusing to use .*summary\.json: it is a symbolic link/,
    );
    assert.deepEqual(await outside.snapshot(), before);
  });

  it('--data-dir: every path of the data folder planted as a link is refused or replaced, never followed', async () => {
    const template = path.join(dir, 'template');
    await mkdir(template);
    await writeFile(
      path.join(template, 'config.json'),
      JSON.stringify({
        parameters: {
          api: { baseUrl: `${server.url}/api/` },
          config: { outputBucket: 'b', jobs: [{ endpoint: 'users' }] },
        },
      }),
    );
    assert.equal((await runGexInProcess(['run', '--data-dir', template])).code, 0);
    const written = (await readdir(template, { recursive: true }))
      .map((p) => p.split(path.sep).join('/'))
      .filter((p) => p !== 'config.json');
    // what a data-folder run writes: out, out/state.json, out/tables and its tables, its record
    assert.deepEqual(written.sort(), [
      '.gex-tables.json',
      'out',
      'out/state.json',
      'out/tables',
      'out/tables/b.users',
      'out/tables/b.users.manifest',
    ]);
    // gex's work folders in out/tables exist only during a run: planted too
    for (const planted of [...written, 'out/tables/.gex-staging', 'out/tables/.gex-parts']) {
      for (const kind of ['dir', 'file', 'dangling'] as PlantedLink[]) {
        const dataDir = path.join(dir, 'data');
        await rm(dataDir, { recursive: true, force: true });
        await cp(template, dataDir, { recursive: true });
        const link = path.join(dataDir, planted);
        await rm(link, { recursive: true, force: true });
        await outside.plant(link, kind);
        const before = await outside.snapshot();
        server.requests.length = 0;
        const result = await runGexInProcess(['run', '--data-dir', dataDir]);
        const what = `${planted} → ${kind}`;
        assert.deepEqual(await outside.snapshot(), before, `${what}: nothing outside changed`);
        if (planted.startsWith('out/tables/b.') || planted === '.gex-tables.json') {
          // a table or the record is a file gex replaces whole (renamed over): the link is gone, not followed
          assert.equal(result.code, 0, `${what}: ${result.stderr}`);
          assert.ok((await lstat(link)).isFile(), what);
        } else {
          assertRefused(result, link, what);
          assert.equal(server.requests.length, 0, `${what}: refused before the first request`);
        }
      }
    }
    assert.equal(await readFile(path.join(outside.dir, 'keep.txt'), 'utf8'), 'keep me\n');
  });
});
