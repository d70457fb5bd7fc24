import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { runGexInProcess } from '../support/in-process-gex.js';
import { makeDataDir } from '../support/extraction.js';

const SECRET = 'Zq9-very-secret-token';
const HUGE_BYTES = 9 * 1024 * 1024;

/** Every file and folder under `dir`, with sizes and modification times: what "nothing written" compares. */
async function listing(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { recursive: true })) {
    const info = await stat(path.join(dir, entry));
    out.push(`${entry} ${info.isDirectory() ? 'dir' : info.size} ${info.mtimeMs}`);
  }
  return out.sort();
}

describe('gex check and gex run --dry-run (CLI)', () => {
  let server: FixtureServer;
  let tmp: string;

  before(async () => {
    server = await startFixtureServer({
      handler: (request) => {
        const url = new URL(request.url, 'http://x');
        if (url.pathname === '/v1/users') {
          const page = url.searchParams.get('page');
          return {
            body: {
              data:
                page === '1'
                  ? [
                      { id: 1, name: 'Ann', tags: ['a', 'b'] },
                      { id: 2, name: 'Bob', address: { city: 'Oslo' } },
                    ]
                  : [],
              meta: { total: 2 },
            },
          };
        }
        // echoes what it got, secrets included: they must not reach the output
        if (url.pathname === '/v1/echo')
          return { body: { items: [{ key: request.headers['x-token'], query: url.search }], token: SECRET } };
        if (url.pathname === '/v1/empty') return { body: { results: { nested: [] }, count: 0, [`k-${SECRET}`]: 1 } };
        if (url.pathname === '/v1/huge') return { body: `{"data":["${'x'.repeat(HUGE_BYTES)}"]}` };
        return undefined; // 404
      },
    });
  });
  after(() => server.close());
  // the check's temporary folders go here: it must be empty afterwards
  beforeEach(async () => (tmp = await mkdtemp(path.join(os.tmpdir(), 'gex-check-test-'))));
  afterEach(() => rm(tmp, { recursive: true, force: true }));

  const config = (
    api: Record<string, unknown> = {},
    job: Record<string, unknown> = { endpoint: 'users', dataField: 'data' },
    extra: Record<string, unknown> = {},
  ) => ({
    parameters: {
      api: { baseUrl: `${server.url}/v1/`, pagination: { method: 'pagenum' }, ...api },
      config: { outputBucket: 'shop', jobs: [job], ...extra },
    },
  });

  async function check(cfg: unknown, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
    const dir = await makeDataDir(cfg);
    try {
      const before = await listing(dir);
      const requests = server.requests.length;
      const result = await runGexInProcess(['check', '--data-dir', dir, ...args], { TMPDIR: tmp, ...env });
      assert.deepEqual(await listing(dir), before, 'the data folder is unchanged');
      assert.deepEqual(await readdir(tmp), [], 'no temporary folder is left');
      return { ...result, sent: server.requests.slice(requests) };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  it('a valid configuration: exit 0, the first request printed, nothing sent', async () => {
    const result = await check(
      config(
        {},
        {
          endpoint: 'users',
          dataField: 'data',
          params: { since: { function: 'date', args: ['Y', { time: 'currentStart' }] } },
        },
      ),
    );
    assert.equal(result.code, 0, result.stderr);
    const year = new Date().getUTCFullYear();
    assert.match(
      result.stdout,
      new RegExp(`job "users": first request\\n    GET ${server.url}/v1/users\\?since=${year}&page=1\\n`),
    );
    assert.match(result.stdout, /User-Agent: gex\//);
    assert.match(result.stdout, /^Result: OK$/m);
    assert.equal(result.sent.length, 0);
  });

  it('--request: status, time, records at dataField and the CSV columns of the first page; one request, nothing written', async () => {
    const result = await check(config(), ['--request']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /-> 200 OK in \d+ ms, \d+ bytes, 2 records/);
    assert.match(result.stdout, /table shop\.users: "id", "name", "tags", "address_city"/);
    assert.match(result.stdout, /table shop\.users_tags: "data", "JSON_parentId"/);
    assert.deepEqual(
      result.sent.map((r) => r.url),
      ['/v1/users?page=1'],
    );

    const json = await check(config(), ['--request', '--json']);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout);
    const job = report.units[0].jobs[0];
    assert.equal(report.ok, true);
    assert.equal(job.request.url, `${server.url}/v1/users?page=1`);
    assert.equal(job.response.status, 200);
    assert.equal(job.response.records, 2);
    assert.equal(typeof job.response.ms, 'number');
    assert.deepEqual(job.response.tables, [
      { table: 'shop.users', columns: ['id', 'name', 'tags', 'address_city'] },
      { table: 'shop.users_tags', columns: ['data', 'JSON_parentId'] },
    ]);
  });

  it('--request without records: the top-level keys of the response', async () => {
    const result = await check(config({}, { endpoint: 'empty', dataField: 'results.items' }, { '#token': SECRET }), [
      '--request',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /0 records\n {4}no records found; top-level keys: "results", "count", "k-\[hidden\]"/);
  });

  it('a mistyped key: a warning naming the nearest known key, exit 0', async () => {
    const cfg = config();
    (cfg.parameters.api as Record<string, unknown>).paginaton = { method: 'offset' };
    const result = await check(cfg);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /warning: Unknown key parameters\.api\.paginaton \(ignored\): did you mean "pagination"\?/,
    );
    assert.match(result.stdout, /^Result: OK \(1 warning\)$/m);
  });

  it('an invalid configuration: exit 1 with the JSON path, also with the typo that caused it', async () => {
    const result = await check(config({ pagination: { method: 'pagenum', limit: -5 } }));
    assert.equal(result.code, 1);
    assert.match(
      result.stdout,
      /invalid\n {2}error: Invalid configuration at parameters\.api\.pagination\.limit: got -5\. Expected the page size/,
    );
    assert.match(result.stdout, /^Result: FAILED$/m);

    const typo = { parameters: { api: { baseUrl: `${server.url}/v1/` }, config: { jbos: [{ endpoint: 'users' }] } } };
    const json = await check(typo, ['--json']);
    assert.equal(json.code, 1);
    const unit = JSON.parse(json.stdout).units[0];
    assert.equal(unit.valid, false);
    assert.equal(unit.error.path, 'parameters.config.jobs');
    assert.equal(unit.error.code, 'GEX_CONFIG_INVALID');
    assert.deepEqual(unit.warnings, ['Unknown key parameters.config.jbos (ignored): did you mean "jobs"?']);
  });

  it('a first request answered 404: exit 1 with the status and URL', async () => {
    const result = await check(config({}, { endpoint: 'nothing-here' }), ['--request']);
    assert.equal(result.code, 1);
    assert.match(
      result.stdout,
      /-> failed after \d+ ms: The API request failed: \[404\] Not Found \(GET http:\/\/127\.0\.0\.1:\d+\/v1\/nothing-here\?page=1\)/,
    );
    assert.equal(result.sent.length, 1, 'no retry');
  });

  it('secrets in a header, a query parameter and an echoing response are masked in every line of text and JSON output', async () => {
    const cfg = config(
      { http: { headers: { 'X-Token': { attr: '#token' } } } },
      { endpoint: 'echo', dataField: 'items', params: { '#apiKey': SECRET, plain: 'visible' } },
      { '#token': SECRET },
    );
    for (const args of [
      [],
      ['--json'],
      ['--request'],
      ['--request', '--json'],
      ['--request', '--log-level', 'debug'],
    ]) {
      const result = await check(cfg, args);
      assert.equal(result.code, 0, result.stderr);
      const output = result.stdout + result.stderr;
      assert.ok(!output.includes(SECRET), `no secret with ${args.join(' ')}: ${output}`);
      for (const encoded of [encodeURIComponent(SECRET), Buffer.from(SECRET).toString('base64')])
        assert.ok(!output.includes(encoded));
      assert.match(output, /\[hidden\]/);
      assert.match(output, /plain=visible/);
    }
    // the request did carry the secret: masking is in the output, not in what is sent
    assert.equal(server.requests.at(-1)!.headers['x-token'], SECRET);
  });

  it('hostile values: control characters in a baseUrl, a data type or a key never reach the terminal raw', async () => {
    const url = config();
    url.parameters.api.baseUrl = `${server.url}/v1/\u001b[2J\r\nX-Forged: 1\u202e/`;
    const dataType = config({}, { endpoint: 'users', dataField: 'data', dataType: 'users\u001b[2J\r\nX-Forged: 1' });
    const key = config({ ['paginat\u001b[2J\r\nX-Forged: 1']: {} });
    for (const [cfg, args] of [url, dataType, key].flatMap((c) =>
      [[], ['--json'], ['--request']].map((a) => [c, a] as const),
    )) {
      const result = await check(cfg, [...args]);
      const output = result.stdout + result.stderr;
      assert.ok(
        !/[\u001b\r\u202e]/.test(output),
        `control characters escaped with ${args.join(' ')}: ${JSON.stringify(output)}`,
      );
      assert.ok(!/\nX-Forged/.test(output), 'no forged line');
      if (args.includes('--json')) JSON.parse(result.stdout);
    }
  });

  it('hostile values: a huge first page is not read beyond the check limit', async () => {
    const result = await check(config({}, { endpoint: 'huge', dataField: 'data' }), ['--request']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /warning: the response is larger than the 8 MiB a check reads: not analysed/);
    const limited = await check(config({}, { endpoint: 'huge' }), ['--request'], { GEX_MAX_RESPONSE_SIZE: '64K' });
    assert.match(limited.stdout, /larger than the 64 KiB a check reads/);
  });

  it('gex run --dry-run prints the first requests, sends nothing and writes nothing (exit 0, or 1 when invalid)', async () => {
    const dir = await makeDataDir(
      config(
        { http: { headers: { 'X-Token': { attr: '#token' } } } },
        { endpoint: 'users', dataField: 'data' },
        { '#token': SECRET },
      ),
    );
    try {
      const before = await listing(dir);
      const requests = server.requests.length;
      const result = await runGexInProcess(['run', '--dry-run', '--data-dir', dir], { TMPDIR: tmp });
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, new RegExp(`GET ${server.url}/v1/users\\?page=1\\n    X-Token: \\[hidden\\]`));
      assert.ok(!(result.stdout + result.stderr).includes(SECRET));
      assert.equal(server.requests.length, requests, 'nothing sent');
      assert.deepEqual(await listing(dir), before, 'no out/, no lock, no state');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const invalid = await makeDataDir(config({ pagination: { method: 'pages' } }));
    try {
      const before = await listing(invalid);
      const result = await runGexInProcess(['run', '--dry-run', '--data-dir', invalid]);
      assert.equal(result.code, 1);
      assert.match(result.stdout, /parameters\.api\.pagination\.method/);
      assert.deepEqual(await listing(invalid), before);
    } finally {
      await rm(invalid, { recursive: true, force: true });
    }
  });

  it('a data folder without config.json: exit 1 saying where it looked, nothing created', async () => {
    const missing = path.join(tmp, 'nope');
    const result = await runGexInProcess(['check', '--data-dir', missing]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /No configuration file at .*nope\/config\.json/);
    assert.deepEqual(await readdir(tmp), []);
  });
});
