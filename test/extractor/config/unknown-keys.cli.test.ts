import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { runGex } from '../../support/cli.js';
import { makeDataDir, readTables } from '../../support/extraction.js';

describe('gex run: unknown configuration keys (CLI process)', () => {
  let server: FixtureServer;

  before(async () => {
    server = await startFixtureServer({
      handler: (request) => {
        const url = new URL(request.url, 'http://x');
        const page = Number(url.searchParams.get('page'));
        if (url.pathname === '/users')
          return {
            body: {
              users:
                page <= 2
                  ? [{ id: page * 10 + 1, account: url.searchParams.get('account') }, { id: page * 10 + 2 }]
                  : [],
            },
          };
        return undefined;
      },
    });
  });
  after(() => server.close());

  const parameters = (typo: boolean) => ({
    api: {
      baseUrl: `${server.url}/`,
      pagination: { method: 'pagenum', limit: 2 },
      // the typo of a second pagination: Generic Extractor ignores it, and so must gex
      ...(typo ? { paginaton: { method: 'offset', limit: 1 } } : {}),
    },
    config: {
      outputBucket: 'typo',
      jobs: [{ endpoint: 'users', dataField: 'users', params: { account: { attr: 'account' } } }],
    },
    // two iterations: the key is still reported once
    iterations: [{ account: 'a' }, { account: 'b' }],
  });

  async function run(typo: boolean) {
    const dir = await makeDataDir({ parameters: parameters(typo) });
    try {
      const before = server.requests.length;
      const result = await runGex(['run', '--data-dir', dir]);
      assert.equal(result.code, 0, result.stderr);
      const requests = server.requests.slice(before).map((r) => `${r.method} ${r.url} ${r.body}`);
      return { result, requests, tables: await readTables(dir) };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  it('warns once about a mistyped key, with the nearest known key, and runs exactly as without the key', async () => {
    const clean = await run(false);
    const typo = await run(true);
    const warnings = (text: string) => text.split('\n').filter((line) => line.includes('Unknown key'));
    assert.deepEqual(warnings(clean.result.stdout + clean.result.stderr), []);
    const typoWarnings = warnings(typo.result.stdout + typo.result.stderr);
    assert.equal(typoWarnings.length, 1, typoWarnings.join('\n'));
    assert.match(
      typoWarnings[0],
      /^\S+ WARN {2}Unknown key parameters\.api\.paginaton \(ignored\): did you mean "pagination"\?$/,
    );
    // same requests in the same order, same tables and manifests byte for byte
    assert.ok(clean.requests.length >= 4, clean.requests.join('\n'));
    assert.deepEqual(typo.requests, clean.requests);
    assert.ok(clean.tables.size > 0);
    assert.deepEqual(typo.tables, clean.tables);
  });
});
