import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runGex, type CliResult } from '../support/cli.js';
import { startFixtureServer } from '../support/fixture-server/fixture-server.js';
import { makeDataDir, readTables } from '../support/extraction.js';
import { runGexInProcess } from '../support/in-process-gex.js';
import { TEST_KEY } from '../support/store.js';

/**
 * Most store-command tests run gex inside the test process (runGexInProcess) to spare a process
 * start per command. That is only sound while it answers exactly as the real binary does: same
 * stdout, stderr and exit code, for successes, user errors, yargs' own exits (--help, --version,
 * usage mistakes) and a process.exit from inside a command — and leaves the test process as it was.
 */
describe('gex in the test process answers byte for byte as the real binary', function () {
  this.timeout(120_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-in-process-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** The store's path, version ids and times are all that may differ between two runs. */
  const alike = (text: string, store: string) =>
    text
      .replaceAll(store, 'STORE')
      .replace(/\b[0-9A-HJKMNP-TV-Z]{26}\b/g, 'ULID')
      .replace(/\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:?\d\d)?/g, 'TIME')
      .replace(/\b\d\d:\d\d:\d\d\.\d{3}\b/g, 'TIME');

  /** Runs `args` both ways, each on its own fresh store in `dir` (made in this process), and returns the in-process result. */
  async function same(args: (store: string) => string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
    const results: CliResult[] = [];
    for (const [way, run] of [
      ['process', runGex],
      ['inside', runGexInProcess],
    ] as const) {
      const store = path.join(dir, `${way}-${results.length}-${Date.now()}.sqlite`);
      const fullEnv = { ...TEST_KEY, KBC_URL: '', KBC_TOKEN: '', GEX_STORE: '', ...env };
      const setup = await runGexInProcess(
        ['configs', 'create', '--store', store, '--name', 'n', '--component-id', 'ex-generic-v2'],
        fullEnv,
        {
          cwd: dir,
        },
      );
      assert.equal(setup.code, 0, setup.stderr);
      const r = await run(args(store), fullEnv, { cwd: dir });
      results.push({ code: r.code, stdout: alike(r.stdout, store), stderr: alike(r.stderr, store) });
    }
    assert.deepEqual(results[1], results[0]);
    return results[1];
  }

  it('a listing, JSON, and a created configuration', async () => {
    assert.equal((await same((s) => ['configs', 'list', '--store', s])).code, 0);
    const json = await same((s) => ['configs', 'list', '--store', s, '--json']);
    assert.equal((JSON.parse(json.stdout) as unknown[]).length, 1);
  });

  it('a user error (exit 1) and a missing store', async () => {
    assert.equal((await same((s) => ['configs', 'get', '999', '--store', s])).code, 1);
    const missing = await same(() => ['configs', 'list', '--store', path.join(dir, 'none.sqlite')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^Error: No store at /);
  });

  it("yargs' exits: --help, --version, an unknown command, a missing argument", async () => {
    assert.match((await same(() => ['--help'])).stdout, /gex run --config-id 123/);
    assert.match((await same(() => ['configs', 'list', '--help'])).stdout, /--json/);
    assert.match((await same(() => ['--version'])).stdout, /^\d+\.\d+\.\d+/);
    assert.equal((await same(() => ['rnu'])).code, 1);
    assert.equal((await same(() => ['configs', 'get'])).code, 1);
  });

  it('process.exit inside a command: an unusable --log-file ends the command with 1 and its message only', async () => {
    const r = await same(() => ['check', '--data-dir', dir, '--log-file', path.join(dir, 'out', 'x.log')]);
    assert.equal(r.code, 1);
    assert.ok(r.stderr.length > 0);
  });

  /** JSON log lines without what differs between two runs: times, durations, the data folder's name. */
  const logLines = (text: string, dataDir: string) =>
    text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l.replaceAll(dataDir, 'DATA')) as Record<string, unknown>)
      .map((line) => ({
        ...line,
        time: undefined,
        durationMs: undefined,
        msg: String(line.msg)
          .replace(/\d+ ms\b/, 'N ms')
          .replace(/[\d.]+ s\b/, 'N s'),
      }));

  it('gex run on a data folder: the same log, exit code and tables; a failing run alike', async () => {
    const server = await startFixtureServer({
      handler: (request) => {
        const page = Number(new URL(request.url, 'http://x').searchParams.get('page'));
        if (request.url.startsWith('/v1/users'))
          return { body: { data: page < 3 ? [{ id: page, name: `user ${page}`, tags: ['a'] }] : [] } };
        return undefined; // 404
      },
    });
    try {
      for (const endpoint of ['users', 'missing']) {
        const config = {
          parameters: {
            api: { baseUrl: `${server.url}/v1/`, pagination: { method: 'pagenum' } },
            config: { outputBucket: 'shop', jobs: [{ endpoint, dataField: 'data' }] },
          },
        };
        const runs = [];
        for (const run of [runGex, runGexInProcess]) {
          const dataDir = await makeDataDir(config);
          try {
            const r = await run(['run', '--data-dir', dataDir, '--log-format', 'json'], { GEX_LOG_LEVEL: 'debug' });
            runs.push({
              code: r.code,
              stdout: logLines(r.stdout, dataDir),
              stderr: logLines(r.stderr, dataDir),
              tables: await readTables(dataDir),
            });
          } finally {
            await rm(dataDir, { recursive: true, force: true });
          }
        }
        assert.deepEqual(runs[1], runs[0]);
        assert.equal(runs[1].code, endpoint === 'users' ? 0 : 1);
        if (endpoint === 'users') assert.equal(runs[1].tables.size, 4, 'users and its tags, each with a manifest');
      }
    } finally {
      await server.close();
    }
  });

  it('leaves the test process as it found it: environment, folder, streams, exit code, listeners', async () => {
    const env = { ...process.env };
    const cwd = process.cwd();
    const stdout = process.stdout;
    const exit = process.exit;
    const listeners = ['beforeExit', 'exit', 'SIGINT', 'SIGTERM'].map((e) => process.listenerCount(e));
    await runGexInProcess(
      ['configs', 'list', '--store', path.join(dir, 'gone.sqlite')],
      { GEX_LOG_LEVEL: 'debug' },
      { cwd: dir },
    );
    await runGexInProcess(['rnu']);
    // a run watches the GC until its process ends ('beforeExit')
    assert.equal((await runGexInProcess(['run', '--data-dir', path.join(dir, 'no-data')])).code, 1);
    assert.deepEqual({ ...process.env }, env);
    assert.equal(process.cwd(), cwd);
    assert.equal(process.stdout, stdout);
    assert.equal(process.exit, exit);
    assert.equal(process.exitCode, undefined);
    assert.deepEqual(
      ['beforeExit', 'exit', 'SIGINT', 'SIGTERM'].map((e) => process.listenerCount(e)),
      listeners,
    );
    assert.deepEqual(await readdir(dir).then((names) => names.includes('gone.sqlite')), false);
  });
});
