import assert from 'node:assert/strict';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { fromPlain, toPlain } from '../../src/json/index.js';
import { runGex, type CliResult } from '../support/cli.js';
import { openEmbeddedStore } from '../support/open-store.js';

const KEY = { GEX_MASTER_KEY: '3e'.repeat(32) };
const OTHER_KEY = { GEX_MASTER_KEY: '4f'.repeat(32) };
const C = 'ex-generic-v2';
const OTHER_SECRET = 'plaintext-of-the-other-store';

/**
 * Root writes anywhere, so a folder gex cannot write is played by running gex as another user
 * (nobody) when the tests run as root; otherwise as this user, for whom chmod is enough.
 */
const AS_ROOT = process.getuid?.() === 0;
const NOBODY = 65534;
const runAs = AS_ROOT ? { uid: NOBODY, gid: NOBODY } : {};

/** Everything below `dir` (and it) belongs to the user gex runs as. */
async function handOver(dir: string): Promise<void> {
  if (!AS_ROOT) return;
  await chown(dir, NOBODY, NOBODY);
  for (const entry of await readdir(dir, { recursive: true })) await chown(path.join(dir, entry), NOBODY, NOBODY);
}

/** A folder gex (as the user it runs as) can read but not write. */
async function lockFolder(folder: string): Promise<void> {
  if (AS_ROOT) await chown(folder, 0, 0);
  await chmod(folder, 0o555);
}

function assertUserError(result: CliResult, pattern: RegExp): void {
  const output = result.stdout + result.stderr;
  assert.equal(result.code, 1, output);
  assert.match(output, pattern);
  assert.doesNotMatch(output, /\n\s+at |Application error/, 'no stack trace');
}

/**
 * Issue 23 item 15: what would fail a run late is checked before its first request — every row's
 * secrets decrypt, and every folder the run writes takes a file — and reported as a user error
 * (exit 1) naming the row and key, or the folder and the OS reason. Real `gex run` processes.
 */
describe('gex run: problems found before the first request (CLI process)', function () {
  this.timeout(60_000);
  let server: FixtureServer;
  let dir: string;
  let storeFile: string;
  let dataDir: string;

  before(async () => {
    server = await startFixtureServer({
      handler: (r) => (r.url.startsWith('/api/') ? { body: [{ id: 1 }] } : undefined),
    });
  });
  after(() => server.close());

  beforeEach(async () => {
    server.requests.length = 0;
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-run-early-'));
    await chmod(dir, 0o755);
    storeFile = path.join(dir, 'store.sqlite');
    dataDir = path.join(dir, 'data');
  });
  afterEach(async () => {
    // a locked folder of this user is unlocked first, so that it can be removed
    for (const entry of await readdir(dir, { recursive: true }).catch(() => []))
      await chmod(path.join(dir, entry), 0o755).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  /** A cipher of OTHER_SECRET made by another store (another master key), as a copied configuration brings it. */
  async function foreignCipher(): Promise<string> {
    const backend = await openEmbeddedStore(path.join(dir, 'other.sqlite'), OTHER_KEY);
    try {
      const store = await backend.localSession();
      const c = await store.createConfiguration(C, {
        name: 'other',
        configuration: fromPlain({ parameters: { '#token': OTHER_SECRET } }),
      });
      const stored = toPlain((await store.getConfiguration(C, c.id)).configuration) as {
        parameters: { '#token': string };
      };
      assert.match(stored.parameters['#token'], /^KBC::ProjectSecure::/);
      return stored.parameters['#token'];
    } finally {
      await backend.close();
    }
  }

  /** Configuration `shop` with rows `a-users` (a secret of this store) and then `b-orders` (its own config). */
  async function storeRows(orders: unknown): Promise<void> {
    const backend = await openEmbeddedStore(storeFile, KEY);
    try {
      const store = await backend.localSession();
      const root = fromPlain({
        parameters: {
          api: { baseUrl: `${server.url}/api/` },
          config: { outputBucket: 'b', '#token': 'this-store-secret' },
        },
      });
      await store.createConfiguration(C, { name: 'shop', configurationId: 'shop', configuration: root });
      await store.createRow(C, 'shop', {
        rowId: 'a-users',
        configuration: fromPlain({ parameters: { config: { jobs: [{ endpoint: 'users' }] } } }),
      });
      await store.createRow(C, 'shop', { rowId: 'b-orders', configuration: fromPlain(orders) });
    } finally {
      await backend.close();
    }
  }

  const run = (...more: string[]) =>
    runGex(['run', '--config-id', 'shop', '--store', storeFile, '--data-dir', dataDir, ...more], KEY, runAs);

  describe('a # value that does not decrypt', () => {
    it("another store's cipher in the second row: exit 1 naming the row and the key before the first row sends anything", async () => {
      const cipher = await foreignCipher();
      await storeRows({ parameters: { config: { '#token': cipher, jobs: [{ endpoint: 'orders' }] } } });
      await handOver(dir);
      const summaryFile = path.join(dir, 'summary.json');
      const result = await run('--summary', summaryFile);
      assertUserError(
        result,
        /Cannot decrypt parameters\.config\.#token of row b-orders: it was encrypted with another master key \(another store's\?\), or for another project or component\. Run with the master key of the store that encrypted it \(GEX_MASTER_KEY\), or enter the secret again in this store/,
      );
      assert.equal(server.requests.length, 0, 'the first row sent no request');
      const output = result.stdout + result.stderr;
      for (const value of [OTHER_SECRET, cipher, 'this-store-secret'])
        assert.ok(!output.includes(value), 'no value is printed');
      const summary = JSON.parse(await readFile(summaryFile, 'utf8')) as {
        status: string;
        rows: Array<{ id: string; status: string; reason?: string }>;
      };
      assert.equal(summary.status, 'error');
      assert.deepEqual(
        summary.rows.map((r) => [r.id, r.status]),
        [
          ['a-users', 'not run'],
          ['b-orders', 'not run'],
        ],
      );
      assert.match(summary.rows[1].reason ?? '', /Cannot decrypt parameters\.config\.#token of row b-orders/);
    });

    it('a value that is not a cipher of gex, deep in a list: named by its whole key path', async () => {
      await storeRows({
        parameters: {
          config: { jobs: [{ endpoint: 'orders', params: { '#key': 'KBC::ProjectSecure::bm90IGEgY2lwaGVy' } }] },
        },
      });
      await handOver(dir);
      const result = await run();
      assertUserError(
        result,
        /Cannot decrypt parameters\.config\.jobs\[0\]\.params\.#key of row b-orders: it is not a cipher text of gex \(damaged or cut short\)/,
      );
      assert.equal(server.requests.length, 0);
    });
  });

  describe('a data folder the run cannot write', () => {
    it("--config-id: a later row's folder of an earlier run that cannot be emptied fails before the first request, naming it", async () => {
      await storeRows({ parameters: { config: { jobs: [{ endpoint: 'orders' }] } } });
      const tables = path.join(dataDir, 'rows', 'b-orders', 'out', 'tables');
      await mkdir(tables, { recursive: true });
      await writeFile(path.join(tables, 'b.orders'), 'from an earlier run');
      await handOver(dir);
      await lockFolder(tables);
      const result = await run();
      assertUserError(
        result,
        new RegExp(
          `Cannot write in the folder ${tables} \\(permission denied, EACCES\\)\\. Make it writable for the user gex runs as \\(uid \\d+\\), or point --data-dir at another folder`,
        ),
      );
      assert.equal(server.requests.length, 0);
    });

    it('--config-id: a rows/ folder that cannot be written fails before the first request, naming it', async () => {
      await storeRows({ parameters: { config: { jobs: [{ endpoint: 'orders' }] } } });
      await mkdir(path.join(dataDir, 'rows'), { recursive: true });
      await handOver(dir);
      await lockFolder(path.join(dataDir, 'rows'));
      const result = await run();
      assertUserError(
        result,
        new RegExp(`Cannot write in the folder ${path.join(dataDir, 'rows')} \\(permission denied, EACCES\\)`),
      );
      assert.equal(server.requests.length, 0);
    });

    it('--data-dir: out/tables of an earlier run that cannot be written fails before the first request, naming it', async () => {
      await mkdir(path.join(dataDir, 'out', 'tables'), { recursive: true });
      await writeFile(
        path.join(dataDir, 'config.json'),
        JSON.stringify({
          parameters: { api: { baseUrl: `${server.url}/api/` }, config: { jobs: [{ endpoint: 'users' }] } },
        }),
      );
      await handOver(dir);
      await lockFolder(path.join(dataDir, 'out', 'tables'));
      const result = await runGex(['run', '--data-dir', dataDir], {}, runAs);
      assertUserError(
        result,
        new RegExp(`Cannot write in the folder ${path.join(dataDir, 'out', 'tables')} \\(permission denied, EACCES\\)`),
      );
      assert.equal(server.requests.length, 0);
    });

    it('--data-dir: a data folder gex cannot write at all fails at its run lock, naming it', async () => {
      await mkdir(dataDir);
      await writeFile(
        path.join(dataDir, 'config.json'),
        JSON.stringify({
          parameters: { api: { baseUrl: `${server.url}/api/` }, config: { jobs: [{ endpoint: 'users' }] } },
        }),
      );
      await handOver(dir);
      await lockFolder(dataDir);
      const result = await runGex(['run', '--data-dir', dataDir], {}, runAs);
      assertUserError(
        result,
        new RegExp(`Cannot create the run lock ${path.join(dataDir, '.gex-run.lock')} \\(permission denied, EACCES\\)`),
      );
      assert.equal(server.requests.length, 0);
    });

    it('--data-dir: a file where out/ must be a folder fails before the first request, naming it', async () => {
      await mkdir(dataDir);
      await writeFile(
        path.join(dataDir, 'config.json'),
        JSON.stringify({
          parameters: { api: { baseUrl: `${server.url}/api/` }, config: { jobs: [{ endpoint: 'users' }] } },
        }),
      );
      await writeFile(path.join(dataDir, 'out'), 'a file');
      const result = await runGex(['run', '--data-dir', dataDir]);
      assertUserError(
        result,
        new RegExp(
          `Cannot use ${path.join(dataDir, 'out')} in the data folder: gex needs a folder there and it is a file`,
        ),
      );
      assert.equal(server.requests.length, 0);
    });
  });
});
