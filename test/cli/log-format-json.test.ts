import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { fromPlain } from '../../src/json/index.js';
import { runGexInProcess } from '../support/in-process-gex.js';
import { openEmbeddedStore } from '../support/open-store.js';

const KEY = '77'.repeat(32);
const SECRET = 's3cr3t "k€y"/42';

type Line = Record<string, unknown> & { level: string; msg: string };

/**
 * `gex run --config-id --log-format json` end to end: every line a JSON object whose fields say
 * what it is about, and a secret the API echoes (into an error message, and in the URL of a retry
 * line's field) hidden everywhere.
 */
describe('gex run --log-format json (CLI, SQLite store)', function () {
  this.timeout(60_000);
  let server: FixtureServer;
  let dir: string;
  let storeFile: string;
  let configId: string;
  let flaky = 0;

  before(async () => {
    server = await startFixtureServer({
      handler: (r) => {
        const url = new URL(r.url, 'http://x');
        const key = url.searchParams.get('key');
        if (url.pathname === '/api/users') {
          // the first request is refused once (retried at once: Retry-After 0), echoing the key
          if (flaky++ === 0)
            return { status: 503, headers: { 'Retry-After': '0' }, body: { error: `busy, key ${key}` } };
          return { body: { items: url.searchParams.get('page') === '1' ? [{ id: 1 }, { id: 2 }] : [] } };
        }
        if (url.pathname === '/api/orders') return { status: 401, body: { error: `invalid key ${key}` } };
        return undefined;
      },
    });
  });
  after(() => server.close());

  beforeEach(async () => {
    flaky = 0;
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-json-logs-'));
    storeFile = path.join(dir, 'store.sqlite');
    const backend = await openEmbeddedStore(storeFile, { GEX_MASTER_KEY: KEY });
    try {
      const store = await backend.localSession();
      const c = await store.createConfiguration('ex-generic-v2', {
        name: 'json logs',
        configuration: fromPlain({
          parameters: {
            api: { baseUrl: `${server.url}/api/`, pagination: { method: 'pagenum' } },
            config: { outputBucket: 'b', '#key': SECRET },
          },
        }),
      });
      const job = (endpoint: string) => ({
        parameters: { config: { jobs: [{ endpoint, dataField: 'items', params: { key: { attr: '#key' } } }] } },
      });
      await store.createRow('ex-generic-v2', c.id, {
        rowId: 'a-users',
        name: 'Users',
        configuration: fromPlain(job('users')),
      });
      await store.createRow('ex-generic-v2', c.id, {
        rowId: 'b-orders',
        name: 'Orders',
        configuration: fromPlain(job('orders')),
      });
      configId = c.id;
    } finally {
      await backend.close();
    }
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const run = (format: 'json' | 'text') =>
    runGexInProcess(
      [
        ...['run', '--config-id', configId, '--store', storeFile, '--data-dir', path.join(dir, 'data')],
        ...['--summary', path.join(dir, 'summary.json'), '--log-format', format, '--log-level', 'debug'],
      ],
      { GEX_MASTER_KEY: KEY },
    );

  it('writes every line as JSON with the fields of the run, the row, the job, the page and the error', async () => {
    const result = await run('json');
    assert.equal(result.code, 1, result.stderr);
    const lines: Line[] = `${result.stdout}${result.stderr}`
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        try {
          return JSON.parse(l) as Line;
        } catch {
          assert.fail(`not a JSON line: ${l}`);
        }
      });
    const find = (pattern: RegExp): Line =>
      lines.find((l) => pattern.test(l.msg)) ?? assert.fail(`no line ${pattern}: ${result.stdout}${result.stderr}`);

    const running = find(/^Running row 1 of 2/);
    assert.deepEqual(pick(running, ['componentId', 'configId', 'rowId', 'folder']), {
      componentId: 'ex-generic-v2',
      configId,
      rowId: 'a-users',
      folder: 'rows/a-users',
    });

    const retry = find(/retry 1 of/);
    assert.equal(retry.level, 'warn');
    assert.deepEqual(pick(retry, ['configId', 'rowId', 'job', 'status', 'attempt', 'method']), {
      configId,
      rowId: 'a-users',
      job: 'users',
      status: 503,
      attempt: 1,
      method: 'GET',
    });
    assert.match(String(retry.url), /key=\[hidden\]/, 'the secret in the URL field is hidden');

    const page = find(/^Job 'users' page 1:/);
    assert.deepEqual(pick(page, ['rowId', 'job', 'endpoint', 'page', 'records', 'status']), {
      rowId: 'a-users',
      job: 'users',
      endpoint: 'users',
      page: 1,
      records: 2,
      status: 200,
    });
    assert.equal(typeof page.durationMs, 'number');

    const table = find(/^Wrote table b\.users/);
    assert.deepEqual(pick(table, ['rowId', 'table', 'rows']), { rowId: 'a-users', table: 'b.users', rows: 2 });

    const finished = find(/^Finished row 1 of 2/);
    assert.deepEqual(pick(finished, ['rowId', 'status', 'records', 'tables', 'requests']), {
      rowId: 'a-users',
      status: 'success',
      records: 2,
      tables: 1,
      requests: 3,
    });
    assert.equal(typeof finished.durationMs, 'number');

    const failed = find(/^Failed row 2 of 2/);
    assert.deepEqual(pick(failed, ['level', 'rowId', 'status', 'errorKind', 'code']), {
      level: 'error',
      rowId: 'b-orders',
      status: 'failed',
      errorKind: 'user',
      code: 'GEX_API_REQUEST_FAILED',
    });

    const error = lines.at(-1)!;
    assert.equal(error.errorKind, 'user');
    assert.equal(error.code, 'GEX_API_REQUEST_FAILED', 'the catalogue code of the refused request');
    const summary = JSON.parse(await readFile(path.join(dir, 'summary.json'), 'utf8'));
    assert.deepEqual(
      { kind: summary.error?.kind, code: summary.error?.code },
      { kind: error.errorKind, code: error.code },
      'the run summary says the kind and code of the log line',
    );
    assert.match(error.msg, /\[401\]/);
    assert.match(error.msg, /invalid key \[hidden\]/, 'the secret the API echoed into the error is hidden');

    const all = `${result.stdout}${result.stderr}`;
    for (const form of [SECRET, JSON.stringify(SECRET).slice(1, -1), encodeURIComponent(SECRET), 's3cr3t'])
      assert.ok(!all.includes(form), `the secret leaked as ${form}`);
  });

  it('keeps the text format as it was: sentences, no structured fields', async () => {
    const result = await run('text');
    assert.equal(result.code, 1);
    const all = `${result.stdout}${result.stderr}`;
    assert.match(all, /INFO {2}Running row 1 of 2: a-users Users in folder rows\/a-users\n/);
    assert.match(all, /INFO {2}Wrote table b\.users: 2 rows\n/);
    assert.doesNotMatch(all, / (configId|rowId|job|status|durationMs|errorKind|code)=/);
    assert.ok(!all.includes('s3cr3t'), all);
  });
});

describe('gex run --log-file (CLI)', function () {
  this.timeout(60_000);
  let server: FixtureServer;
  let dir: string;

  before(async () => {
    server = await startFixtureServer({
      handler: (r) =>
        r.url.startsWith('/users')
          ? { body: { items: [{ id: 1 }] } }
          : { status: 401, body: { error: `bad key in ${r.url}` } },
    });
  });
  after(() => server.close());
  beforeEach(async () => {
    server.requests.length = 0;
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-log-file-'));
    const { mkdir, writeFile } = await import('node:fs/promises');
    await mkdir(path.join(dir, 'data'));
    const params = { key: { attr: '#key' } };
    const jobs = [
      { endpoint: 'users', params },
      { endpoint: 'orders', params },
    ];
    const parameters = { api: { baseUrl: `${server.url}/` }, config: { '#key': SECRET, jobs } };
    await writeFile(path.join(dir, 'data', 'config.json'), JSON.stringify({ parameters }));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('appends the lines of stdout and stderr, masked; info on stdout, errors on stderr only', async () => {
    const { readFile, writeFile } = await import('node:fs/promises');
    const logFile = path.join(dir, 'run.log');
    await writeFile(logFile, 'earlier line\n');
    const dataDir = path.join(dir, 'data');
    const result = await runGexInProcess(['run', '--data-dir', dataDir, '--log-file', logFile, '--log-level', 'debug']);
    assert.equal(result.code, 1, result.stderr);
    const logged = await readFile(logFile, 'utf8');
    assert.ok(logged.startsWith('earlier line\n'), 'appended');
    const lines = (text: string) => text.split('\n').filter((l) => l !== '');
    assert.deepEqual(lines(logged).slice(1).sort(), [...lines(result.stdout), ...lines(result.stderr)].sort());
    assert.match(result.stdout, /INFO {2}Job 'users'/);
    assert.doesNotMatch(result.stdout, / ERROR /);
    assert.match(result.stderr, /ERROR .*\[401\]/);
    assert.doesNotMatch(result.stderr, / (INFO|WARN|DEBUG) /);
    for (const form of [SECRET, encodeURIComponent(SECRET), 's3cr3t']) {
      assert.ok(!logged.includes(form), `the secret leaked as ${form}`);
    }
  });

  it("refuses a log file in the data folder's out/ before doing anything (exit 1)", async () => {
    const { readdir } = await import('node:fs/promises');
    const logFile = path.join(dir, 'data', 'out', 'run.log');
    const result = await runGexInProcess(['run', '--data-dir', path.join(dir, 'data'), '--log-file', logFile]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /ERROR Refusing --log-file .*: it is inside .*data\/out, which gex writes and clears/);
    assert.equal(server.requests.length, 0);
    assert.deepEqual(await readdir(path.join(dir, 'data')), ['config.json']);
  });
});

function pick(line: Line, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, line[k]]));
}
