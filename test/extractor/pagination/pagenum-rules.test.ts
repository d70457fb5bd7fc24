import assert from 'node:assert/strict';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { runExtraction } from '../../support/extraction.js';

/**
 * The page-number rules (docs/ge-behaviour.md#pagination), each asserted as the exact sequence of request
 * targets a real HTTP server receives.
 */
describe('pagenum pagination rules against a real server', () => {
  let server: FixtureServer;
  // pages hold `sizes[page - 1]` records; `page` may be absent (treated as page 1)
  let sizes: number[];

  before(async () => {
    server = await startFixtureServer({
      handler: (request) => {
        const url = new URL(request.url, 'http://x');
        const pageValue = url.searchParams.get(url.searchParams.has('p') ? 'p' : 'page');
        const page = pageValue === null ? 1 : Number(pageValue);
        const count = sizes[page - 1] ?? 0;
        return { body: { items: Array.from({ length: count }, (_, i) => ({ id: page * 100 + i, url: request.url })) } };
      },
    });
  });
  after(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });

  async function requestsFor(
    pagination: Record<string, unknown>,
    job: Record<string, unknown> = {},
  ): Promise<string[]> {
    await runExtraction({
      api: { baseUrl: `${server.url}/api/`, pagination: { method: 'pagenum', ...pagination } },
      config: { outputBucket: 'b', jobs: [{ endpoint: 'items', dataField: 'items', ...job }] },
    });
    return server.requests.map((r) => r.url);
  }

  it('rule 1: starts at firstPage and increments by one', async () => {
    sizes = [0, 2, 2, 1];
    assert.deepEqual(await requestsFor({ firstPage: 2, limit: 2 }), [
      '/api/items?page=2&limit=2',
      '/api/items?page=3&limit=2',
      '/api/items?page=4&limit=2',
    ]);
  });

  it('rule 2: with all defaults the requests carry page=1, page=2, … until an empty page', async () => {
    sizes = [3, 3, 1];
    assert.deepEqual(await requestsFor({}), [
      '/api/items?page=1',
      '/api/items?page=2',
      '/api/items?page=3',
      '/api/items?page=4',
    ]);
  });

  it('rule 3: the page size goes in limitParam when a limit is set', async () => {
    sizes = [2, 1];
    assert.deepEqual(await requestsFor({ limit: 2, limitParam: 'per_page' }), [
      '/api/items?page=1&per_page=2',
      '/api/items?page=2&per_page=2',
    ]);
  });

  it('rule 4: firstPageParams false sends the first request bare, the second carries firstPage + 1', async () => {
    sizes = [2, 2, 0];
    assert.deepEqual(await requestsFor({ limit: 2, firstPageParams: false }), [
      '/api/items',
      '/api/items?page=2&limit=2',
      '/api/items?page=3&limit=2',
    ]);
    sizes = [2, 0];
    server.requests.length = 0;
    assert.deepEqual(await requestsFor({ limit: 2, firstPage: 0, firstPageParams: false, pageParam: 'p' }), [
      '/api/items',
      '/api/items?p=1&limit=2',
      '/api/items?p=2&limit=2',
    ]);
  });

  it('rule 5: stops on underflow (fewer records than the limit, zero included)', async () => {
    sizes = [2, 2];
    assert.deepEqual(await requestsFor({ limit: 2 }), [
      '/api/items?page=1&limit=2',
      '/api/items?page=2&limit=2',
      '/api/items?page=3&limit=2',
    ]);
    server.requests.length = 0;
    sizes = [2, 1, 2];
    assert.deepEqual(await requestsFor({ limit: 2 }), ['/api/items?page=1&limit=2', '/api/items?page=2&limit=2']);
  });

  it('rule 5: without a limit only an empty page stops', async () => {
    sizes = [5, 1, 3];
    assert.deepEqual(await requestsFor({}), [
      '/api/items?page=1',
      '/api/items?page=2',
      '/api/items?page=3',
      '/api/items?page=4',
    ]);
  });

  it('rule 6: jobs[].params[limitParam] overrides the limit for that job (its key keeps its place)', async () => {
    sizes = [3, 2];
    assert.deepEqual(await requestsFor({ limit: 2, limitParam: 'size' }, { params: { size: 3, q: 'x' } }), [
      '/api/items?size=3&q=x&page=1',
      '/api/items?size=3&q=x&page=2',
    ]);
  });

  it('accepts the limit as a numeric string and sends the integer (GE: "02" → limit=2)', async () => {
    sizes = [2, 0];
    assert.deepEqual(await requestsFor({ limit: '02' }), ['/api/items?page=1&limit=2', '/api/items?page=2&limit=2']);
  });

  for (const empty of [0, '0', '', null]) {
    it(`treats limit ${JSON.stringify(empty)} as "no limit"`, async () => {
      sizes = [1, 0];
      assert.deepEqual(await requestsFor({ limit: empty }), ['/api/items?page=1', '/api/items?page=2']);
    });
  }

  it('a job limit of 0 falls back to the configured limit', async () => {
    sizes = [2, 1];
    assert.deepEqual(await requestsFor({ limit: 2 }, { params: { limit: 0 } }), [
      '/api/items?limit=2&page=1',
      '/api/items?limit=2&page=2',
    ]);
  });
});

describe('duplicate-page guard against a real server', () => {
  it('stops when a page repeats the previous one and does not write it', async () => {
    const server = await startFixtureServer({
      handler: (request) => {
        const page = Number(new URL(request.url, 'http://x').searchParams.get('page'));
        return { body: page === 1 ? [{ id: 1 }, { id: 2 }] : [{ id: 3 }, { id: 4 }] };
      },
    });
    try {
      const run = await runExtraction({
        api: { baseUrl: `${server.url}/`, pagination: { method: 'pagenum' } },
        config: { outputBucket: 'b', jobs: [{ endpoint: 'x' }] },
      });
      assert.deepEqual(
        server.requests.map((r) => r.url),
        ['/x?page=1', '/x?page=2', '/x?page=3'],
      );
      assert.equal(run.files.get('b.x'), '"id"\n"1"\n"2"\n"3"\n"4"\n');
      assert.match(run.logs, /matched the previous one/);
    } finally {
      await server.close();
    }
  });
});

describe('offset pagination against a real server', () => {
  let server: FixtureServer;
  const total = 5;
  before(async () => {
    server = await startFixtureServer({
      handler: (request) => {
        const url = new URL(request.url, 'http://x');
        const offset = Number(url.searchParams.get('skip') ?? url.searchParams.get('offset') ?? 0);
        const limit = Number(url.searchParams.get('count') ?? url.searchParams.get('limit') ?? 100);
        const items = [];
        for (let i = offset; i < Math.min(total, offset + limit); i++) items.push({ id: i });
        return { body: items };
      },
    });
  });
  after(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });

  async function requests(pagination: Record<string, unknown>, params?: Record<string, unknown>): Promise<string[]> {
    await runExtraction({
      api: { baseUrl: `${server.url}/`, pagination: { method: 'offset', ...pagination } },
      config: { outputBucket: 'b', jobs: [{ endpoint: 'users', params }] },
    });
    return server.requests.map((r) => r.url);
  }

  it('pages by limit and stops on underflow', async () => {
    assert.deepEqual(await requests({ limit: 2 }), [
      '/users?limit=2&offset=0',
      '/users?limit=2&offset=2',
      '/users?limit=2&offset=4',
    ]);
  });

  it('renames the parameters and takes the start offset from the job with offsetFromJob', async () => {
    assert.deepEqual(
      await requests({ limit: 2, limitParam: 'count', offsetParam: 'skip', offsetFromJob: true }, { skip: 1 }),
      ['/users?skip=1&count=2', '/users?skip=3&count=2', '/users?skip=5&count=2'],
    );
  });

  it('ignores a job offset without offsetFromJob but keeps its place', async () => {
    assert.deepEqual(await requests({ limit: 4, offsetParam: 'skip' }, { skip: '7', x: 1 }), [
      '/users?skip=0&x=1&limit=4',
      '/users?skip=4&x=1&limit=4',
    ]);
  });

  it('requires a limit', async () => {
    await assert.rejects(requests({}), /parameters\.api\.pagination\.limit: is required for offset pagination/);
  });
});
