import assert from 'node:assert/strict';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { runExtraction } from '../../support/extraction.js';

/**
 * A page GE cannot take (a body that is not JSON, records the parser refuses) ends GE's run right
 * there. gex sends requests ahead (the next page while one is parsed, predicted pages with
 * `concurrency`), which must never show: a sequential run sends exactly GE's requests and no more.
 */
describe('a page that ends the run', () => {
  let server: FixtureServer;

  /** `/<mode>/items`: page 2 of every pagination is the bad one. */
  function pageOf(url: URL): number {
    if (url.searchParams.has('page')) return Number(url.searchParams.get('page'));
    if (url.searchParams.has('offset')) return Number(url.searchParams.get('offset')) / 2 + 1;
    if (url.searchParams.has('after')) return Number(url.searchParams.get('after')) + 1;
    if (url.searchParams.has('p')) return Number(url.searchParams.get('p'));
    return 1;
  }

  before(async () => {
    server = await startFixtureServer({
      handler: (r) => {
        const url = new URL(r.url, 'http://x');
        const [, mode] = url.pathname.split('/');
        if (mode === 'sentinel') return { body: {} };
        const page = pageOf(url);
        if (page === 2 && mode === 'not-json') return { body: '{"items": [ not json' };
        // page 1 had a scalar here: the JSON parser refuses an object in the same column
        const conflict = page === 2 && mode === 'conflict';
        if (page > 6) return { body: { items: [] } };
        const items = [1, 2].map((i) => ({ id: page, n: i, kind: conflict ? { x: 1 } : 'plain' }));
        return { body: { items, next: `/${mode}/items?p=${page + 1}` } };
      },
    });
  });
  after(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });

  /**
   * The request targets the server got for the run. A request sent ahead would already be on its
   * way when the run failed: a later sentinel request makes sure it has arrived.
   */
  async function requestsOfFailedRun(parameters: unknown, message: RegExp): Promise<string[]> {
    await assert.rejects(runExtraction(parameters), message);
    await fetch(`${server.url}/sentinel`);
    const urls = server.requests.map((r) => r.url);
    assert.equal(urls.pop(), '/sentinel');
    return urls;
  }

  const paginations: Array<[string, Record<string, unknown>, (mode: string) => string[]]> = [
    ['pagenum', { method: 'pagenum' }, (m) => [`/${m}/items?page=1`, `/${m}/items?page=2`]],
    ['offset', { method: 'offset', limit: 2 }, (m) => [`/${m}/items?limit=2&offset=0`, `/${m}/items?limit=2&offset=2`]],
    ['cursor', { method: 'cursor', idKey: 'id', param: 'after' }, (m) => [`/${m}/items`, `/${m}/items?after=1`]],
    ['response.url', { method: 'response.url', urlKey: 'next' }, (m) => [`/${m}/items`, `/${m}/items?p=2`]],
  ];
  const failures: Array<[string, RegExp]> = [
    ['not-json', /Invalid JSON response/],
    ['conflict', /Unhandled nodeType change/],
  ];

  for (const [name, pagination, expected] of paginations) {
    for (const [mode, message] of failures) {
      it(`${name}: page 2 ${mode === 'not-json' ? 'not JSON' : 'refused by the parser'} — pages 1 and 2 requested, nothing more`, async () => {
        const parameters = {
          api: { baseUrl: `${server.url}/`, pagination },
          config: { outputBucket: 'b', jobs: [{ endpoint: `${mode}/items`, dataField: 'items' }] },
        };
        assert.deepEqual(await requestsOfFailedRun(parameters, message), expected(mode));
      });
    }
  }

  it('a child page refused by the parser: no further child or parent request', async () => {
    const parameters = {
      api: { baseUrl: `${server.url}/`, pagination: { method: 'pagenum' } },
      config: {
        outputBucket: 'b',
        jobs: [
          {
            endpoint: 'parent/items',
            dataField: 'items',
            children: [
              { endpoint: 'conflict/items', dataField: 'items', dataType: 'child', placeholders: { id: 'id' } },
            ],
          },
        ],
      },
    };
    assert.deepEqual(await requestsOfFailedRun(parameters, /Unhandled nodeType change/), [
      '/parent/items?page=1',
      '/conflict/items?page=1',
      '/conflict/items?page=2',
    ]);
  });

  it('with concurrency, pages past the bad one may have been requested, never more than concurrency - 1 of them', async () => {
    const concurrency = 4;
    const parameters = {
      api: { baseUrl: `${server.url}/`, pagination: { method: 'pagenum', concurrency } },
      config: { outputBucket: 'b', jobs: [{ endpoint: 'not-json/items', dataField: 'items' }] },
    };
    const urls = await requestsOfFailedRun(parameters, /Invalid JSON response/);
    assert.deepEqual(urls.slice(0, 2), ['/not-json/items?page=1', '/not-json/items?page=2']);
    const pages = urls.map((u) => pageOf(new URL(u, 'http://x')));
    assert.ok(Math.max(...pages) <= 2 + concurrency - 1, `pages requested: ${pages.join(', ')}`);
    assert.equal(new Set(pages).size, pages.length, 'no page twice');
  });
});
