import assert from 'node:assert/strict';
import { readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { runGexInProcess } from '../support/in-process-gex.js';
import { makeDataDir } from '../support/extraction.js';

describe('gex run (CLI)', () => {
  let server: FixtureServer;
  const secret = 's3cr3t-Value/42';

  before(async () => {
    server = await startFixtureServer({
      handler: (request) => {
        const url = new URL(request.url, 'http://x');
        if (url.pathname === '/users')
          return { body: { users: url.searchParams.get('page') === '1' ? [{ id: 1 }, { id: 2 }] : [] } };
        if (url.pathname === '/echo')
          return { status: 401, body: { error: `bad key ${url.searchParams.get('#apiKey')}` } };
        return undefined;
      },
    });
  });
  after(() => server.close());

  const config = (extra: Record<string, unknown> = {}, job: Record<string, unknown> = { endpoint: 'users' }) => ({
    parameters: {
      api: { baseUrl: `${server.url}/`, pagination: { method: 'pagenum' } },
      config: { outputBucket: 'cli', jobs: [job], ...extra },
    },
  });

  it('exits 0, writes tables, manifests and state, and logs why pagination stopped', async () => {
    const dir = await makeDataDir(config());
    try {
      const result = await runGexInProcess(['run', '--data-dir', dir]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(await readFile(path.join(dir, 'out/tables/cli.users'), 'utf8'), '"id"\n"1"\n"2"\n');
      assert.equal(
        await readFile(path.join(dir, 'out/tables/cli.users.manifest'), 'utf8'),
        '{"destination":"in.c-cli.users","incremental":false}',
      );
      assert.match(
        await readFile(path.join(dir, 'out/state.json'), 'utf8'),
        /^\{"time":\{"previousStart":\d+\},"json_parser\.struct":/,
      );
      assert.match(result.stdout, /Job 'users' finished: 2 pages, 2 records; stopped: empty page \(no limit is set\)/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads the data folder from KBC_DATADIR', async () => {
    const dir = await makeDataDir(config());
    try {
      const result = await runGexInProcess(['run'], { KBC_DATADIR: dir });
      assert.equal(result.code, 0, result.stderr);
      assert.match(await readFile(path.join(dir, 'out/tables/cli.users'), 'utf8'), /"1"/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('exits 1 on an invalid configuration, naming the path and the fix', async () => {
    const dir = await makeDataDir({
      parameters: {
        api: { baseUrl: `${server.url}/`, pagination: { method: 'pagenum', limit: -5 } },
        config: { jobs: [{ endpoint: 'users' }] },
      },
    });
    try {
      const result = await runGexInProcess(['run', '--data-dir', dir]);
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        /Invalid configuration at parameters\.api\.pagination\.limit: got -5\. Expected the page size: a non-negative integer/,
      );
      await assert.rejects(readFile(path.join(dir, 'out/state.json')), /ENOENT/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('exits 1 when there is no config.json, saying where it looked', async () => {
    const result = await runGexInProcess(['run', '--data-dir', '/nonexistent/gex-data']);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /No configuration file at \/nonexistent\/gex-data\/config\.json/);
  });

  it('exits 1 when the API refuses, naming URL and status, with secrets hidden everywhere', async () => {
    const dir = await makeDataDir(config({ '#password': secret }, { endpoint: 'echo', params: { '#apiKey': secret } }));
    try {
      const result = await runGexInProcess(['run', '--data-dir', dir, '--log-level', 'debug']);
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        /The API request failed: \[401\] Unauthorized \(GET http:\/\/127\.0\.0\.1:\d+\/echo\?%23apiKey=\[hidden\]&page=1\)/,
      );
      assert.match(result.stderr, /bad key \[hidden\]/);
      const all = result.stdout + result.stderr;
      assert.ok(!all.includes(secret), 'the secret must not appear in any output');
      assert.ok(!all.includes(encodeURIComponent(secret)), 'nor URL-encoded');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('exits 1 naming the folder when the output folder cannot be created (a file is in its place)', async () => {
    const dir = await makeDataDir(config());
    try {
      await writeFile(path.join(dir, 'out'), 'not a folder');
      const result = await runGexInProcess(['run', '--data-dir', dir]);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /Cannot use .*\/out in the data folder: gex needs a folder there and it is a file/);
      assert.doesNotMatch(result.stderr, /Application error/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('writes JSON log lines with --log-format json', async () => {
    const dir = await makeDataDir(config());
    try {
      await mkdir(path.join(dir, 'out'), { recursive: true });
      const result = await runGexInProcess(['run', '--data-dir', dir, '--log-format', 'json']);
      assert.equal(result.code, 0);
      const lines = result.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { level: string; msg: string });
      assert.ok(lines.every((l) => l.level === 'info' && typeof l.msg === 'string'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('image_parameters.allowed_hosts', () => {
  it('refuses a job URL outside the whitelist before sending anything, and allows a match', async () => {
    const { DataFolder } = await import('../../src/extractor/data-folder.js');
    const { extract } = await import('../../src/extractor/extractor.js');
    const { silentLogger } = await import('../../src/common/logger.js');
    const server = await startFixtureServer({ handler: () => ({ body: [{ id: 1 }] }) });
    const run = async (allowed: unknown[]) => {
      const dir = await makeDataDir({
        parameters: { api: { baseUrl: `${server.url}/api/` }, config: { jobs: [{ endpoint: 'users' }] } },
        image_parameters: { allowed_hosts: allowed },
      });
      try {
        return await extract(await new DataFolder(dir).read(), { dataDir: dir, logger: silentLogger() });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    };
    try {
      await assert.rejects(
        run([{ host: 'example.com' }]),
        /URL "http:\/\/127\.0\.0\.1:\d+\/api\/users" is not in the allowed hosts whitelist/,
      );
      await assert.rejects(run([{ host: '127.0.0.1', endpoint: 'other' }]), /not in the allowed hosts whitelist/);
      assert.equal(server.requests.length, 0);
      const result = await run([{ host: '127.0.0.1', scheme: 'http', port: String(server.port), endpoint: 'api' }]);
      assert.equal(result.tables.length, 1);
    } finally {
      await server.close();
    }
  });
});
