import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { runGexInProcess } from '../../support/in-process-gex.js';

/** Every file below `root`, relative, sorted. */
async function filesBelow(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => !e.isDirectory())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .sort();
}

/**
 * Hostile output names through `gex run --data-dir` (the CLI, in this process). The data folder sits in a
 * temporary "canary" folder: names that climb out of out/tables (`../../../canary`) or name an
 * absolute path inside it would create files there. Each run must exit 1 with a message that names
 * the configuration key (or the response path), send no request when the configuration is at fault,
 * and leave no file anywhere but the configuration it was given.
 */
describe('output names cannot write outside out/tables (gex run)', () => {
  let server: FixtureServer;
  let canary: string;
  let dataDir: string;
  const longKey = `k_${Array.from({ length: 300 }, () => 'k').join('-')}`;

  before(async () => {
    server = await startFixtureServer({
      handler: (request) => {
        if (request.url.startsWith('/long')) return { body: [{ id: 1, [longKey]: [1, 2] }] };
        return { body: [{ id: 1, items: [{ v: 2 }] }] };
      },
    });
  });
  after(() => server.close());

  beforeEach(async () => {
    canary = await mkdtemp(path.join(os.tmpdir(), 'gex-canary-'));
    dataDir = path.join(canary, 'data');
    await mkdir(dataDir);
    server.requests.length = 0;
  });
  afterEach(() => rm(canary, { recursive: true, force: true }));

  async function attack(config: Record<string, unknown>, extra: Record<string, unknown> = {}) {
    await writeFile(
      path.join(dataDir, 'config.json'),
      JSON.stringify({ parameters: { api: { baseUrl: `${server.url}/` }, config, ...extra } }),
    );
    const result = await runGexInProcess(['run', '--data-dir', dataDir]);
    assert.deepEqual(await filesBelow(canary), ['data/config.json'], `files written: ${result.stdout}${result.stderr}`);
    assert.equal(result.code, 1, result.stderr);
    assert.doesNotMatch(result.stderr + result.stdout, /\n\s+at /, 'no stack trace');
    return `${result.stdout}${result.stderr}`;
  }

  const escape = '../../../canary';
  const jobs = [{ endpoint: 'users' }];

  it('refuses outputBucket climbing out, absolute, with "\\" or NUL — before any request', async () => {
    for (const bucket of [escape, path.join(canary, 'abs'), 'a\\b', 'a\u0000b', '..']) {
      const output = await attack({ outputBucket: bucket, jobs });
      assert.match(output, /Invalid configuration at parameters\.config\.outputBucket: the bucket name /, output);
    }
    assert.equal(server.requests.length, 0);
  });

  it('refuses a bucket set by an iteration, naming the iteration', async () => {
    const output = await attack({ outputBucket: 'ok', jobs }, { iterations: [{}, { outputBucket: escape }] });
    assert.match(output, /Invalid configuration at parameters\.iterations\[1\]\.outputBucket: .*path separator/);
    assert.equal(server.requests.length, 0);
  });

  it('refuses api.name and config.id that would make the default bucket climb out', async () => {
    const viaId = await attack({ id: `/${escape}`, jobs });
    assert.match(
      viaId,
      /Invalid configuration at parameters\.config\.id: makes the bucket name "ex-api-generic-\/\.\.\/\.\.\/\.\.\/canary"/,
    );
    assert.equal(server.requests.length, 0);
  });

  it('refuses mapping keys that climb out, are absolute, "." or "..", even for data types no job has', async () => {
    for (const key of [escape, path.join(canary, 'abs'), '.', '..']) {
      const output = await attack({ jobs, mappings: { [key]: { id: 'id' } } });
      assert.ok(output.includes(`Invalid configuration at parameters.config.mappings[${JSON.stringify(key)}]`), output);
    }
    assert.equal(server.requests.length, 0);
  });

  it('refuses a table destination of a mapping (nested in tableMapping) that climbs out', async () => {
    const mappings = {
      users: {
        id: 'id',
        items: {
          type: 'table',
          destination: 'items',
          tableMapping: { v: 'v', tags: { type: 'table', destination: escape, tableMapping: { t: 't' } } },
        },
      },
    };
    const output = await attack({ outputBucket: 'b', jobs, mappings });
    assert.match(
      output,
      /Invalid configuration at parameters\.config\.mappings\.users\.items\.tableMapping\.tags\.destination: the table name "\.\.\/\.\.\/\.\.\/canary" contains a path separator/,
    );
    assert.equal(server.requests.length, 0);
  });

  it('refuses names over 255 bytes with ".manifest": a mapping key, and a bucket with no room left', async () => {
    const longMapping = await attack({ outputBucket: 'bucket', jobs, mappings: { ['ü'.repeat(120)]: { id: 'id' } } });
    assert.match(
      longMapping,
      /Invalid configuration at parameters\.config\.mappings\["üü.*256 bytes long, over the file system's limit of 255 bytes/,
    );
    const longBucket = await attack({ outputBucket: 'b'.repeat(250), jobs });
    assert.match(
      longBucket,
      /Invalid configuration at parameters\.config\.outputBucket: the bucket name "b+…" is 250 bytes long/,
    );
    assert.equal(server.requests.length, 0);
  });

  it('refuses a dataType (or child endpoint) that leaves an empty table name', async () => {
    const output = await attack({
      jobs: [{ endpoint: 'users', children: [{ endpoint: '{id}/..', dataType: '../..', placeholders: { id: 'id' } }] }],
    });
    assert.match(
      output,
      /Invalid configuration at parameters\.config\.jobs\[0\]\.children\[0\]\.dataType: "\.\.\/\.\." becomes the table name "" .*is empty/,
    );
    assert.equal(server.requests.length, 0);
  });

  it('refuses a child table whose name from a response key is over the limit, naming the response path (JSON and legacy parser)', async () => {
    for (const compatLevel of [3, 1]) {
      const output = await attack({ outputBucket: 'b', compatLevel, jobs: [{ endpoint: 'long' }] });
      assert.match(
        output,
        /Cannot write the table of the response path "long\.k_k-k-k.*over the file system's limit of 255 bytes per file name/,
        output,
      );
    }
  });
});
