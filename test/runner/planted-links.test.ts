import assert from 'node:assert/strict';
import { cp, lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UnsafeDataPath } from '../../src/extractor/folder-guard.js';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { fromPlain } from '../../src/json/index.js';
import { Runner } from '../../src/runner/runner.js';
import { captureLogger } from '../support/extraction.js';
import { openConfigStore, type OpenedStore } from '../support/open-store.js';
import { Outside, type PlantedLink } from '../support/outside.js';

const C = 'ex-generic-v2';
const KEY = { GEX_MASTER_KEY: '5a'.repeat(32) };

/** Every path below `dir` (relative, `/`-separated), folders before what is in them. */
async function layout(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map((e) => e.split(path.sep).join('/')).sort();
}

/**
 * The class of issue 23 item 10, swept: a stored configuration's run is made once, and then every
 * path it wrote below the data folder — folders and files, gex's own and the tables — is replaced
 * in turn by a link to a folder outside, a file outside or nothing, and the run made again. Whatever
 * the path, nothing outside changes; a path the run writes into is refused (a UserError naming
 * it) before any request; only what gex removes as a whole (what is inside a row's folder, tables
 * in out/tables) may instead be replaced.
 */
describe('a stored configuration run with a link planted anywhere in its data folder', function () {
  this.timeout(120_000);
  let server: FixtureServer;
  let dir: string;
  let opened: OpenedStore;
  let outside: Outside;

  before(async () => {
    server = await startFixtureServer({
      handler: (r) => (r.url.startsWith('/api/') ? { body: [{ id: 1, name: r.url }] } : undefined),
    });
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-planted-links-'));
    opened = await openConfigStore(path.join(dir, 'store.sqlite'), { env: KEY });
    const store = opened.store;
    const root = fromPlain({ parameters: { api: { baseUrl: `${server.url}/api/` }, config: { outputBucket: 'b' } } });
    const rows = await store.createConfiguration(C, { name: 'rows', configurationId: 'rows', configuration: root });
    await store.createRow(C, rows.id, {
      rowId: 'a-users',
      configuration: fromPlain({ parameters: { config: { jobs: [{ endpoint: 'users' }] } } }),
    });
    // the second row reads the first row's table: its in/tables is written too
    await store.createRow(C, rows.id, {
      rowId: 'b-orders',
      configuration: fromPlain({
        storage: { input: { tables: [{ source: 'in.c-b.users', destination: 'users.csv' }] } },
        parameters: { config: { jobs: [{ endpoint: 'orders' }] } },
      }),
    });
    const plain = fromPlain({
      storage: { input: { tables: [{ source: 'in.c-b.users', destination: 'users.csv' }] } },
      parameters: {
        api: { baseUrl: `${server.url}/api/` },
        config: { outputBucket: 'p', jobs: [{ endpoint: 'items' }] },
      },
    });
    await store.createConfiguration(C, { name: 'no rows', configurationId: 'plain', configuration: plain });
    outside = new Outside(path.join(dir, 'outside'));
    await outside.create();
  });
  after(async () => {
    await opened.close();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function run(configId: string, dataDir: string) {
    const capture = captureLogger();
    const runner = new Runner({
      target: { kind: 'stored', store: opened, componentId: C, configId, rowIds: [] },
      dataDir,
      logger: capture.logger,
      masker: capture.masker,
    });
    return runner.run().then(
      () => null,
      (error: Error) => error,
    );
  }

  /** What must be refused: every path a run writes into, rather than removes as a whole. */
  const refused: Record<string, (p: string) => boolean> = {
    rows: (p) => p === 'rows' || /^rows\/[^/]+$/.test(p),
    plain: (p) => !/^out\/tables\/p\./.test(p),
  };

  for (const configId of ['rows', 'plain']) {
    it(`${configId === 'rows' ? 'with rows' : 'without rows'}: refused, or replaced, never followed`, async () => {
      const template = path.join(dir, `template-${configId}`);
      assert.equal(await run(configId, template), null, 'the first run succeeds');
      const paths = await layout(template);
      assert.ok(paths.length >= (configId === 'rows' ? 20 : 10), paths.join(' '));
      let checked = 0;
      for (const planted of paths) {
        for (const kind of ['dir', 'file', 'dangling'] as PlantedLink[]) {
          const dataDir = path.join(dir, `data-${configId}-${++checked}`);
          await cp(template, dataDir, { recursive: true });
          const at = path.join(dataDir, planted);
          await rm(at, { recursive: true });
          await outside.plant(at, kind);
          const before = await outside.snapshot();
          server.requests.length = 0;
          const error = await run(configId, dataDir);
          const what = `${planted} → ${kind}`;
          assert.deepEqual(await outside.snapshot(), before, `${what}: nothing outside changed`);
          if (refused[configId](planted)) {
            assert.ok(
              error instanceof UnsafeDataPath,
              `${what}: refused, got ${error ? `${error.name}: ${error.message}` : 'success'}`,
            );
            assert.ok(
              error.message.includes(`Refusing to use ${at}: it is a symbolic link`),
              `${what}: ${error.message}`,
            );
            assert.equal(server.requests.length, 0, `${what}: refused before the first request`);
          } else {
            assert.equal(error, null, `${what}: ${error?.message}`);
            assert.ok(
              !(await lstat(at).catch(() => undefined))?.isSymbolicLink(),
              `${what}: the link was removed with the folder it was in`,
            );
          }
          await rm(dataDir, { recursive: true, force: true });
        }
      }
    });
  }
});
