import assert from 'node:assert/strict';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { runExtraction } from '../../support/extraction.js';

/** Child jobs, userData and iterations against a real server: request order and tables. */
describe('child jobs, userData and iterations', () => {
  let server: FixtureServer;
  const orders: Record<string, unknown[]> = { '1': [{ id: 'a' }, { id: 'b' }], '2': [{ id: 'c' }] };

  before(async () => {
    server = await startFixtureServer({
      handler: (r) => {
        const url = new URL(r.url, 'http://x');
        const page = Number(url.searchParams.get('page') ?? 1);
        if (url.pathname === '/users')
          return {
            body:
              page === 1
                ? [
                    { id: 1, name: 'A' },
                    { id: 2, name: 'B' },
                  ]
                : page === 2
                  ? [{ id: 3, name: 'C' }]
                  : [],
          };
        const user = /^\/users\/(\d+)\/orders$/.exec(url.pathname);
        if (user) return { body: page === 1 ? (orders[user[1]] ?? []) : [] };
        const detail = /^\/orders\/(\w+)$/.exec(url.pathname);
        if (detail) return { body: { id: detail[1], total: 10 } };
        if (url.pathname === '/accounts') return { body: [{ id: url.searchParams.get('account') }] };
        return undefined;
      },
    });
  });
  after(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });

  it('runs children for each record of a page before the next page, depth first, with parent columns', async () => {
    const run = await runExtraction({
      api: { baseUrl: `${server.url}/`, pagination: { method: 'pagenum' } },
      config: {
        outputBucket: 'b',
        userData: { source: 'gex' },
        jobs: [
          {
            endpoint: 'users',
            children: [
              {
                endpoint: 'users/{user-id}/orders',
                dataType: 'orders',
                placeholders: { 'user-id': 'id' },
                recursionFilter: 'id<3',
                children: [
                  {
                    endpoint: 'orders/{order-id}',
                    dataType: 'order-detail',
                    dataField: '.',
                    placeholders: { 'order-id': 'id' },
                  },
                ],
              },
            ],
          },
        ],
      },
    });
    // children inherit the parent's pagination (a fresh copy per parent record); a detail page that
    // repeats is stopped by the duplicate-page guard and not written twice
    assert.deepEqual(
      server.requests.map((r) => r.url),
      [
        '/users?page=1',
        '/users/1/orders?page=1',
        '/orders/a?page=1',
        '/orders/a?page=2',
        '/orders/b?page=1',
        '/orders/b?page=2',
        '/users/1/orders?page=2',
        '/users/2/orders?page=1',
        '/orders/c?page=1',
        '/orders/c?page=2',
        '/users/2/orders?page=2',
        '/users?page=2',
        '/users?page=3',
      ],
    );
    assert.equal(run.files.get('b.users'), '"id","name","source"\n"1","A","gex"\n"2","B","gex"\n"3","C","gex"\n');
    assert.equal(run.files.get('b.orders'), '"id","parent_id"\n"a","1"\n"b","1"\n"c","2"\n');
    assert.equal(
      run.files.get('b.order-detail'),
      '"id","total","parent_id"\n"a","10","a"\n"b","10","b"\n"c","10","c"\n',
    );
  });

  it('evaluates param and userData functions with attr and time', async () => {
    const run = await runExtraction(
      {
        api: { baseUrl: `${server.url}/` },
        config: {
          outputBucket: 'b',
          accountId: 'acc-7',
          userData: { extracted: { function: 'date', args: ['Y-m-d', { time: 'previousStart' }] } },
          jobs: [{ endpoint: 'accounts', params: { account: { attr: 'accountId' } } }],
        },
      },
      { state: { time: { previousStart: 1492606006 } } },
    );
    assert.deepEqual(
      server.requests.map((r) => r.url),
      ['/accounts?account=acc-7'],
    );
    assert.equal(run.files.get('b.accounts'), '"id","extracted"\n"acc-7","2017-04-19"\n');
  });

  it('runs every iteration with its attributes into the shared bucket table', async () => {
    const run = await runExtraction({
      api: { baseUrl: `${server.url}/` },
      config: { outputBucket: 'b', jobs: [{ endpoint: 'accounts', params: { account: { attr: 'account' } } }] },
      iterations: [{ account: 'one' }, { account: 'two' }],
    });
    assert.deepEqual(
      server.requests.map((r) => r.url),
      ['/accounts?account=one', '/accounts?account=two'],
    );
    assert.equal(run.files.get('b.accounts'), '"id"\n"one"\n"two"\n');
  });
});
