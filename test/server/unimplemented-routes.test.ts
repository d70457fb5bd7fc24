import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { unimplementedFeature } from '../../src/server/errors/unimplemented.js';
import { repoRoot } from '../support/cli.js';
import { BRANCH, DEPRECATED, useTestServer, type ApiResponse } from '../support/storage-api-server.js';

/**
 * Keboola routes gex does not implement (issue 23 item 20b, docs/storage-api.md#not-implemented)
 * answer 501 `notImplemented` saying what is missing, from one place (src/server/errors/unimplemented.ts);
 * only paths that are no Keboola route at all are 404 "Unknown route".
 */

function assertNotImplemented(res: ApiResponse, what: RegExp, call: string): void {
  assert.equal(res.status, 501, `${call}: ${res.text}`);
  assert.equal(res.body.code, 'notImplemented', call);
  assert.equal(res.body.status, 'error');
  assert.match(res.body.exceptionId, /^exception-[0-9a-f]{32}$/);
  assert.match(res.body.error, /^Not implemented in gex: /, call);
  assert.match(res.body.error, what, call);
  assert.ok(res.body.error.includes(`(${call})`), `${call}: the message names the call: ${res.body.error}`);
}

describe('server: routes gex does not implement', () => {
  const server = useTestServer();

  describe('unimplementedFeature', () => {
    it('names the feature of a Keboola route in both path forms, with or without a trailing slash; null for anything else', () => {
      const cases: Array<[string, RegExp | null]> = [
        ['/v2/storage/files/123/tags/x', /tags of a file/],
        ['/v2/storage/branch/default/files/123/refresh', /upload credentials/],
        ['/v2/storage/files', null],
        ['/v2/storage/files/prepare', null],
        ['/v2/storage/tables/in.c-a.b/import', /table import/],
        ['/v2/storage/buckets/in.c-a/share-to-projects', /bucket sharing/],
        ['/v2/storage/buckets/in.c-a/refresh-tables-info', /external buckets/],
        ['/v2/storage/tables/in.c-a.b/alias-filter', /alias tables/],
        ['/v2/storage/workspaces/5/load', /workspaces/],
        ['/v2/storage/jobs', /list of Storage jobs/],
        ['/v2/storage/tokens/5/share', /sending tokens by e-mail/],
        ['/v2/storage', null],
        ['/v2/storage/', null],
        ['/v2/storage/nonsense', null],
        ['/v2/storage/tables/in.c-a.b/nonsense', null],
        ['/v2/storage/jobs/5/nonsense', null],
        ['/v2/storage/filesystem', null],
        ['/v3/storage/files', null],
        ['/files', null],
      ];
      for (const [p, expected] of cases) {
        const feature = unimplementedFeature(p);
        if (expected === null) assert.equal(feature, null, p);
        else assert.match(feature ?? '(null)', expected, p);
      }
    });
  });

  it('answers routes gex does not implement with 501 saying what is not implemented (both path forms, with or without a token)', async () => {
    const calls: Array<[string, string, RegExp]> = [
      ['POST', '/files/42/tags', /tags of a file/],
      ['PUT', '/files/42/refresh', /upload credentials/],
      ['POST', '/tables/in.c-main.t/import', /table import/],
      ['GET', '/tables/in.c-main.t/snapshots', /table snapshots/],
      ['POST', '/workspaces', /workspaces/],
      ['GET', '/jobs', /list of Storage jobs/],
      ['PUT', '/tokens/5', /changing a token/],
    ];
    for (const [method, rest, what] of calls) {
      for (const prefix of [DEPRECATED, BRANCH]) {
        for (const token of [undefined, null]) {
          const res = await server().request(method, `${prefix}${rest}`, {
            token,
            ...(method === 'GET' || method === 'DELETE' ? {} : { json: {} }),
          });
          assertNotImplemented(res, what, `${method} ${prefix}${rest}`);
        }
      }
    }
  });

  it("answers every route of Keboola's Storage API: implemented, or 501 saying what is missing — never Unknown route", async () => {
    const routes = readFileSync(path.join(repoRoot, 'test', 'fixtures', 'storage-api', 'keboola-routes.txt'), 'utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'));
    assert.ok(routes.length > 200, `the route list was read: ${routes.length}`);
    const implemented: string[] = [];
    for (const line of routes) {
      const [method, template] = line.split(' ');
      const url = `${DEPRECATED}${template.replace(/\/branch\/X\//, '/branch/default/').replaceAll('X', 'x1')}`;
      const res = await server().request(method, url, method === 'GET' || method === 'DELETE' ? {} : { json: {} });
      assert.ok(!(res.status === 404 && /Unknown route/.test(res.text)), `${method} ${url}: ${res.text}`);
      if (res.status === 501)
        assert.match(
          res.body.error,
          /^(Not implemented in gex: |Reset to default branch is not implemented)/,
          `${method} ${url}`,
        );
      else implemented.push(line);
    }
    // the routes gex serves still reach their handlers (the catch-all does not shadow them)
    for (const served of [
      'GET /',
      'GET /tables',
      'GET /tables/X/data-preview/',
      'GET /tokens/verify',
      'GET /tokens',
      'POST /tokens',
      'GET /dev-branches/',
      'GET /jobs/X',
    ]) {
      assert.ok(implemented.includes(served), `${served} answered by its route`);
    }
  });

  it('answers paths that are no Keboola route with 404 Unknown route, naming the call (cut to 200 characters)', async () => {
    for (const url of [
      '/v2/storage/nonsense',
      '/v2/storage/tables/in.c-a.b/nonsense',
      '/v3/files',
      `/v2/storage/${'a'.repeat(5000)}`,
    ]) {
      const res = await server().get(url);
      assert.equal(res.status, 404, url);
      assert.equal(res.body.code, 'notFound');
      assert.match(res.body.error, /^Unknown route: GET \/v[23]\//);
      assert.ok(res.body.error.length < 500, 'a long path is cut');
    }
  });
});
