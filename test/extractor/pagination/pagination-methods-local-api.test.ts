import assert from 'node:assert/strict';
import { items, PagedApi } from '../../support/paged-api.js';

/**
 * Every pagination method against a real server, as the exact sequence of requests: GE's worked
 * examples of docs/ge-behaviour.md#pagination (049–062) rebuilt as our own fixtures, plus type juggling.
 */
describe('pagination methods against a real server', () => {
  let api: PagedApi;
  before(async () => {
    api = await PagedApi.start();
  });
  after(() => api.close());

  describe('offset', () => {
    it('EX049: custom limitParam/offsetParam, stops on an empty page', async () => {
      const run = await api.run(
        { method: 'offset', limit: 2, limitParam: 'count', offsetParam: 'skip' },
        [{ endpoint: 'users', dataField: 'items' }],
        {
          'users?count=2&skip=0': items(1, 2),
          'users?count=2&skip=2': items(3, 4),
          'users?count=2&skip=4': items(),
        },
      );
      assert.deepEqual(run.requests, ['users?count=2&skip=0', 'users?count=2&skip=2', 'users?count=2&skip=4']);
      assert.match(run.logs, /underflow: the page had 0 records, less than the limit 2/);
    });

    it('EX050: offsetFromJob starts at the job offset; the job limit overrides the configured one', async () => {
      const run = await api.run(
        { method: 'offset', limit: 20, limitParam: 'count', offsetParam: 'skip', offsetFromJob: true },
        [
          { endpoint: 'users', dataField: 'items', params: { count: 5, skip: 2 } },
          { endpoint: 'orders', dataField: 'items', params: { count: 10 } },
        ],
        { 'users?count=5&skip=2': items(3, 4), 'orders?count=10&skip=0': items(1, 2, 3) },
      );
      assert.deepEqual(run.requests, ['users?count=5&skip=2', 'orders?count=10&skip=0']);
    });
  });

  describe('pagenum', () => {
    it('EX051: page=1, 2, 3 until an empty page (no limit)', async () => {
      const run = await api.run({ method: 'pagenum' }, [{ endpoint: 'users', dataField: 'items' }], {
        'users?page=1': items(1, 2),
        'users?page=2': items(3),
        'users?page=3': items(),
      });
      assert.deepEqual(run.requests, ['users?page=1', 'users?page=2', 'users?page=3']);
    });

    it('EX052: renamed pageParam/limitParam, the page before the limit, stops on underflow', async () => {
      const run = await api.run(
        { method: 'pagenum', pageParam: 'set', limitParam: 'count', limit: 2 },
        [{ endpoint: 'users', dataField: 'items' }],
        {
          'users?set=1&count=2': items(1, 2),
          'users?set=2&count=2': items(3, 4),
          'users?set=3&count=2': items(5),
        },
      );
      assert.deepEqual(run.requests, ['users?set=1&count=2', 'users?set=2&count=2', 'users?set=3&count=2']);
    });

    it('EX053: firstPage 0 without first-page params: the job key keeps its place, then set=1, 2', async () => {
      const run = await api.run(
        { method: 'pagenum', pageParam: 'set', limitParam: 'count', firstPage: 0, firstPageParams: false },
        [{ endpoint: 'users', dataField: 'items', params: { count: 2 } }],
        { 'users?count=2': items(1, 2), 'users?count=2&set=1': items(3, 4), 'users?count=2&set=2': items(5) },
      );
      assert.deepEqual(run.requests, ['users?count=2', 'users?count=2&set=1', 'users?count=2&set=2']);
    });
  });

  describe('response.url', () => {
    it('EX054: follows an absolute-path next URL until it is false', async () => {
      const run = await api.run(
        { method: 'response.url', urlKey: 'links.next' },
        [{ endpoint: 'users', dataField: 'items' }],
        {
          users: { ...items(1, 2), links: { next: '/api/users?page=2' } },
          'users?page=2': { ...items(3, 4), links: { next: false } },
        },
      );
      assert.deepEqual(run.requests, ['users', 'users?page=2']);
      assert.equal(run.files.get('b.users'), '"id","name"\n"1","user 1"\n"2","user 2"\n"3","user 3"\n"4","user 4"\n');
      assert.match(run.logs, /response\.url: no next page \(links\.next is false\)/);
    });

    it('EX055: includeParams appends the job params after the next URL query', async () => {
      const run = await api.run(
        { method: 'response.url', urlKey: 'links.next', includeParams: true },
        [{ endpoint: 'users', dataField: 'items', params: { account: 123 } }],
        {
          'users?account=123': { ...items(1), links: { next: 'users?page=2' } },
          'users?page=2&account=123': items(2),
        },
      );
      assert.deepEqual(run.requests, ['users?account=123', 'users?page=2&account=123']);
    });

    it('a relative next URL resolves against baseUrl, not against the previous URL; without includeParams the job params are dropped', async () => {
      const run = await api.run(
        { method: 'response.url' },
        [{ endpoint: 'v1/users', dataField: 'items', params: { account: 1 } }],
        {
          'v1/users?account=1': { ...items(1), next_page: 'v1/users?cursor=abc' },
          'v1/users?cursor=abc': { ...items(2), next_page: null },
        },
      );
      assert.deepEqual(run.requests, ['v1/users?account=1', 'v1/users?cursor=abc']);
    });

    it('EX056: paramIsQuery overlays the next query on the job params (job keys keep their place)', async () => {
      const run = await api.run(
        { method: 'response.url', urlKey: 'links.next', paramIsQuery: true, includeParams: true },
        [{ endpoint: 'users', dataField: 'items', params: { account: 123, page: 'start' } }],
        {
          'users?account=123&page=start': { ...items(1, 2), links: { next: '?page=2' } },
          'users?account=123&page=2': items(3, 4),
        },
      );
      assert.deepEqual(run.requests, ['users?account=123&page=start', 'users?account=123&page=2']);
    });

    it('paramIsQuery decodes the next query like Guzzle (+, %XX, repeated keys, bare keys) and re-encodes it', async () => {
      const run = await api.run(
        { method: 'response.url', paramIsQuery: true },
        [{ endpoint: 'users', dataField: 'items', params: { dropped: 1 } }],
        {
          'users?dropped=1': { ...items(1), next_page: '??q=a+b%2Fc&tag=x&tag=y&flag' },
          // flag has no value (null): http_build_query leaves it out; the list repeats the key with indexes
          'users?q=a+b%2Fc&tag%5B0%5D=x&tag%5B1%5D=y': items(2),
        },
      );
      assert.deepEqual(run.requests, ['users?dropped=1', 'users?q=a+b%2Fc&tag%5B0%5D=x&tag%5B1%5D=y']);
    });

    for (const empty of [false, null, '', 0, '0']) {
      it(`stops when the next URL is ${JSON.stringify(empty)} (PHP-empty)`, async () => {
        const run = await api.run({ method: 'response.url' }, [{ endpoint: 'users', dataField: 'items' }], {
          users: { ...items(1), next_page: empty },
        });
        assert.deepEqual(run.requests, ['users']);
      });
    }

    it('a next URL that is not a string is a user error', async () => {
      const { error, requests } = await api.failure(
        { method: 'response.url' },
        [{ endpoint: 'users', dataField: 'items' }],
        { users: { items: [], next_page: { href: 'x' } } },
      );
      assert.deepEqual(requests, ['users']);
      assert.match(error.message, /next page URL at 'next_page' must be a string, got \{"href":"x"\}/);
    });

    it('zendesk.response.url follows next URLs until start_time is less than 6 minutes ago', async () => {
      const old = Math.floor(Date.now() / 1000) - 3600;
      const recent = Math.floor(Date.now() / 1000) - 60;
      const run = await api.run({ method: 'zendesk.response.url' }, [{ endpoint: 'tickets', dataField: 'items' }], {
        tickets: { ...items(1), next_page: `tickets?start_time=${old}` },
        [`tickets?start_time=${old}`]: { ...items(2), next_page: `tickets?start_time=${recent}` },
      });
      assert.deepEqual(run.requests, ['tickets', `tickets?start_time=${old}`]);
      assert.match(run.logs, new RegExp(`the next start_time ${recent} is less than 6 minutes ago`));
    });
  });

  describe('response.param', () => {
    it('EX057: sends the response value as queryParam', async () => {
      const run = await api.run(
        { method: 'response.param', responseParam: 'scrolling.next_page', queryParam: 'page' },
        [{ endpoint: 'users', dataField: 'items' }],
        {
          users: { ...items(1, 2), scrolling: { next_page: 2 } },
          'users?page=2': { ...items(3), scrolling: { next_page: null } },
        },
      );
      assert.deepEqual(run.requests, ['users', 'users?page=2']);
    });

    it('EX058: includeParams: the value replaces the job key in place', async () => {
      const run = await api.run(
        { method: 'response.param', responseParam: 'scrolling.next_page', queryParam: 'page', includeParams: true },
        [{ endpoint: 'users', dataField: 'items', params: { page: 'start', orderBy: 'id' } }],
        {
          'users?page=start&orderBy=id': { ...items(1, 2), scrolling: { next_page: 2 } },
          'users?page=2&orderBy=id': items(3),
        },
      );
      assert.deepEqual(run.requests, ['users?page=start&orderBy=id', 'users?page=2&orderBy=id']);
    });

    it('EX059: a POST search, then GET scroll requests to another endpoint until the token is missing', async () => {
      const run = await api.run(
        {
          method: 'response.param',
          responseParam: 'scroll.token',
          queryParam: 'scrollToken',
          scrollRequest: { endpoint: 'results', method: 'GET' },
        },
        [{ endpoint: 'search', method: 'POST', dataField: 'items', params: { object: 'users', orderBy: 'id' } }],
        {
          search: { scroll: { token: 'b97d814f1a715d939f3f96bc574445de' } },
          'results?scrollToken=b97d814f1a715d939f3f96bc574445de': {
            ...items(1, 2),
            scroll: { token: '4015e9ce43edfb0668ddaa973ebc7e87' },
          },
          'results?scrollToken=4015e9ce43edfb0668ddaa973ebc7e87': { ...items(3), scroll: {} },
        },
      );
      assert.deepEqual(run.requests, [
        'POST search {"object":"users","orderBy":"id"}',
        'results?scrollToken=b97d814f1a715d939f3f96bc574445de',
        'results?scrollToken=4015e9ce43edfb0668ddaa973ebc7e87',
      ]);
      assert.match(run.logs, /dataField 'items' contains no data/);
      assert.equal(run.files.get('b.search'), '"id","name"\n"1","user 1"\n"2","user 2"\n"3","user 3"\n');
    });

    it('scrollRequest params are deep-merged over the job params', async () => {
      const run = await api.run(
        {
          method: 'response.param',
          responseParam: 'next',
          queryParam: 'token',
          includeParams: true,
          scrollRequest: { params: { filter: { to: 9 }, scroll: '1m' } },
        },
        [{ endpoint: 'users', dataField: 'items', params: { filter: { from: 1, to: 5 }, q: 'x' } }],
        {
          'users?filter%5Bfrom%5D=1&filter%5Bto%5D=5&q=x': { ...items(1), next: 'T' },
          'users?filter%5Bfrom%5D=1&filter%5Bto%5D=9&q=x&scroll=1m&token=T': items(2),
        },
      );
      assert.deepEqual(run.requests, [
        'users?filter%5Bfrom%5D=1&filter%5Bto%5D=5&q=x',
        'users?filter%5Bfrom%5D=1&filter%5Bto%5D=9&q=x&scroll=1m&token=T',
      ]);
    });
  });

  describe('cursor', () => {
    it('EX060: the highest id so far goes in param; an empty page stops', async () => {
      const run = await api.run(
        { method: 'cursor', idKey: 'fields.id', param: 'continueAfter' },
        [{ endpoint: 'users', dataField: 'items' }],
        {
          users: { items: [{ fields: { id: 123 } }, { fields: { id: 234 } }] },
          'users?continueAfter=234': { items: [{ fields: { id: 345 } }, { fields: { id: 456 } }] },
          'users?continueAfter=456': { items: [] },
        },
      );
      assert.deepEqual(run.requests, ['users', 'users?continueAfter=234', 'users?continueAfter=456']);
      assert.match(run.logs, /stopped: cursor: empty page/);
    });

    it('EX061: reverse with increment -1; the job key keeps its place', async () => {
      const run = await api.run(
        { method: 'cursor', idKey: 'id', param: 'startWith', reverse: true, increment: -1 },
        [{ endpoint: 'users', dataField: 'items', params: { startWith: 'last', account: '123' } }],
        {
          'users?startWith=last&account=123': items(456, 345),
          'users?startWith=344&account=123': items(234, 123),
          'users?startWith=122&account=123': items(),
        },
      );
      assert.deepEqual(run.requests, [
        'users?startWith=last&account=123',
        'users?startWith=344&account=123',
        'users?startWith=122&account=123',
      ]);
    });

    it('keeps the running maximum across pages (a page of lower ids does not move the cursor back)', async () => {
      const run = await api.run(
        { method: 'cursor', idKey: 'id', param: 'after' },
        [{ endpoint: 'users', dataField: 'items' }],
        {
          users: items(10, 20),
          'users?after=20': items(5, 15),
        },
      );
      // after=15 would be a 404; the repeated page is stopped by the duplicate-page guard
      assert.deepEqual(run.requests, ['users', 'users?after=20', 'users?after=20']);
      assert.match(run.logs, /matched the previous one/);
    });

    it('int64 ids stay exact and numeric strings count', async () => {
      const run = await api.run({ method: 'cursor', idKey: 'id', param: 'after' }, [{ endpoint: 'tweets' }], {
        tweets: '[{"id":1234567890123456789},{"id":"1234567890123456790"}]',
        'tweets?after=1234567890123456790': '[]',
      });
      assert.deepEqual(run.requests, ['tweets', 'tweets?after=1234567890123456790']);
    });
  });

  describe('multiple', () => {
    it('EX062: the default scroller, and a job naming its own', async () => {
      const run = await api.run(
        {
          method: 'multiple',
          scrollers: { list_scroller: { method: 'offset', limit: '2' }, search_scroller: { method: 'pagenum' } },
          default: 'list_scroller',
        },
        [{ endpoint: 'users' }, { endpoint: 'search', scroller: 'search_scroller' }],
        {
          'users?limit=2&offset=0': [{ id: 1 }, { id: 2 }],
          'users?limit=2&offset=2': [{ id: 3 }],
          'search?page=1': [{ id: 1 }],
          'search?page=2': [{ id: 2 }],
          'search?page=3': [],
        },
      );
      assert.deepEqual(run.requests, [
        'users?limit=2&offset=0',
        'users?limit=2&offset=2',
        'search?page=1',
        'search?page=2',
        'search?page=3',
      ]);
    });

    it('without a default, a job without scroller is not paginated', async () => {
      const run = await api.run(
        { method: 'multiple', scrollers: { pages: { method: 'pagenum' } } },
        [{ endpoint: 'users' }],
        { users: [{ id: 1 }] },
      );
      assert.deepEqual(run.requests, ['users']);
    });

    it('each scroller has its own stop conditions, and decorators next to "multiple" wrap them all', async () => {
      const run = await api.run(
        {
          method: 'multiple',
          forceStop: { pages: 3 },
          scrollers: {
            flagged: { method: 'pagenum', nextPageFlag: { field: 'more', stopOn: false } },
            plain: { method: 'pagenum' },
          },
        },
        [
          { endpoint: 'a', scroller: 'flagged' },
          { endpoint: 'b', scroller: 'plain' },
        ],
        {
          'a?page=1': { more: true, rows: [{ id: 1 }] },
          'a?page=2': { more: false, rows: [{ id: 2 }] },
          'b?page=1': [{ id: 1 }],
          'b?page=2': [{ id: 2 }],
          'b?page=3': [{ id: 3 }],
        },
      );
      assert.deepEqual(run.requests, ['a?page=1', 'a?page=2', 'b?page=1', 'b?page=2', 'b?page=3']);
    });

    it('an unknown scroller name is a user error listing the defined ones', async () => {
      const { error, requests } = await api.failure(
        { method: 'multiple', scrollers: { a: { method: 'pagenum' }, b: { method: 'offset', limit: 1 } } },
        [{ endpoint: 'users', scroller: 'c' }],
        {},
      );
      assert.deepEqual(requests, []);
      assert.match(
        error.message,
        /parameters\.api\.pagination\.scrollers: has no scroller 'c'.*scrollers defined: a, b/,
      );
    });
  });
});
