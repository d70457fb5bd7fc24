import assert from 'node:assert/strict';
import { items, PagedApi } from '../../support/paged-api.js';

/**
 * The stop conditions (nextPageFlag, forceStop, limitStop) against a real server: GE's worked
 * examples (EX045–EX048, EX116, EX126, EX127, EX138–EX140) rebuilt as our own fixtures, their
 * order, and what a stop does to a child paginator shared by several placeholder values.
 */
describe('pagination stop conditions against a real server', () => {
  let api: PagedApi;
  before(async () => {
    api = await PagedApi.start();
  });
  after(() => api.close());

  const users = [{ endpoint: 'users', dataField: 'items' }];
  const offset2 = { method: 'offset', limit: '2' };

  describe('nextPageFlag', () => {
    it('EX045: hasMore true goes on, false stops (stopOn false)', async () => {
      const run = await api.run({ ...offset2, nextPageFlag: { field: 'hasMore', stopOn: false } }, users, {
        'users?limit=2&offset=0': { hasMore: true, ...items(1, 2) },
        'users?limit=2&offset=2': { hasMore: false, ...items(3, 4) },
      });
      assert.deepEqual(run.requests, ['users?limit=2&offset=0', 'users?limit=2&offset=2']);
      assert.match(run.logs, /stopped: nextPageFlag: hasMore is false/);
    });

    it('EX046: stopOn true, ifNotSet false: a missing flag goes on, "no" is true and stops', async () => {
      const run = await api.run(
        { ...offset2, nextPageFlag: { field: 'hasMore', stopOn: true, ifNotSet: false } },
        users,
        {
          'users?limit=2&offset=0': items(1, 2),
          'users?limit=2&offset=2': { hasMore: 'no', ...items(3, 4) },
        },
      );
      assert.deepEqual(run.requests, ['users?limit=2&offset=0', 'users?limit=2&offset=2']);
      assert.match(run.logs, /nextPageFlag: hasMore is "no", which counts as true/);
    });

    it('EX047: isLast "yes" stops (stopOn true)', async () => {
      const run = await api.run({ ...offset2, nextPageFlag: { field: 'isLast', stopOn: true } }, users, {
        'users?limit=2&offset=0': { isLast: false, ...items(1, 2) },
        'users?limit=2&offset=2': { isLast: 'yes', ...items(3, 4) },
      });
      assert.deepEqual(run.requests, ['users?limit=2&offset=0', 'users?limit=2&offset=2']);
    });

    it('ifNotSet defaults to stopOn: a missing flag stops at once', async () => {
      const run = await api.run({ ...offset2, nextPageFlag: { field: 'hasMore', stopOn: false } }, users, {
        'users?limit=2&offset=0': items(1, 2),
      });
      assert.deepEqual(run.requests, ['users?limit=2&offset=0']);
      assert.match(run.logs, /nextPageFlag: hasMore is not set, which counts as false/);
    });

    it('the field is a top-level name, not a path', async () => {
      const run = await api.run(
        { ...offset2, nextPageFlag: { field: 'meta.more', stopOn: false, ifNotSet: true } },
        users,
        {
          'users?limit=2&offset=0': { 'meta.more': true, meta: { more: false }, ...items(1, 2) },
          'users?limit=2&offset=2': { 'meta.more': false, ...items(3, 4) },
        },
      );
      assert.deepEqual(run.requests, ['users?limit=2&offset=0', 'users?limit=2&offset=2']);
    });

    it('the method still stops on its own (underflow) while the flag says more', async () => {
      const run = await api.run({ ...offset2, nextPageFlag: { field: 'hasMore', stopOn: false } }, users, {
        'users?limit=2&offset=0': { hasMore: true, ...items(1) },
      });
      assert.deepEqual(run.requests, ['users?limit=2&offset=0']);
      assert.match(run.logs, /underflow/);
    });
  });

  describe('forceStop', () => {
    const page1 = {
      items: [
        { id: 123, name: 'John Doe' },
        { id: 234, name: 'Jane Doe' },
      ],
    }; // 69 bytes as JSON
    const page2 = {
      isLast: 'yes',
      items: [
        { id: 345, name: 'Jimmy Doe' },
        { id: 456, name: 'Jenny Doe' },
      ],
    };

    it('EX048: a first page of exactly the volume limit (69 bytes) goes on; then the page limit stops', async () => {
      const run = await api.run({ ...offset2, forceStop: { pages: 2, volume: 69 } }, [{ endpoint: 'users' }], {
        'users?limit=2&offset=0': page1,
        'users?limit=2&offset=2': page2,
      });
      assert.deepEqual(run.requests, ['users?limit=2&offset=0', 'users?limit=2&offset=2']);
      assert.equal(run.files.get('b.users')!.split('\n').length, 6);
      assert.match(run.logs, /forceStop: 2 pages reached/);
    });

    it('a volume one byte under the first page stops after it (the page is still written)', async () => {
      const run = await api.run({ ...offset2, forceStop: { volume: 68 } }, [{ endpoint: 'users' }], {
        'users?limit=2&offset=0': page1,
      });
      assert.deepEqual(run.requests, ['users?limit=2&offset=0']);
      assert.equal(run.files.get('b.users'), '"id","name"\n"123","John Doe"\n"234","Jane Doe"\n');
      assert.match(run.logs, /forceStop: 69 bytes received, over the volume limit of 68 bytes/);
    });

    it('EX116: every job counts its own pages', async () => {
      const run = await api.run(
        { ...offset2, forceStop: { pages: 2 } },
        [{ endpoint: 'users' }, { endpoint: 'accounts' }],
        {
          'users?limit=2&offset=0': [{ id: 1 }, { id: 2 }],
          'users?limit=2&offset=2': [{ id: 3 }, { id: 4 }],
          'accounts?limit=2&offset=0': [{ id: 1 }, { id: 2 }],
          'accounts?limit=2&offset=2': [{ id: 3 }, { id: 4 }],
        },
      );
      assert.deepEqual(run.requests, [
        'users?limit=2&offset=0',
        'users?limit=2&offset=2',
        'accounts?limit=2&offset=0',
        'accounts?limit=2&offset=2',
      ]);
      assert.equal(run.logs.match(/forceStop: 2 pages reached/g)?.length, 2);
    });

    it('an unparsable time is 0 seconds in GE: every job stops after its first page', async () => {
      const run = await api.run({ ...offset2, forceStop: { time: 'whenever' } }, [{ endpoint: 'users' }], {
        'users?limit=2&offset=0': [{ id: 1 }, { id: 2 }],
      });
      assert.deepEqual(run.requests, ['users?limit=2&offset=0']);
      assert.match(run.logs, /forceStop: time limit of 0 seconds reached/);
    });

    it('a time span far away does not stop', async () => {
      const run = await api.run({ ...offset2, forceStop: { time: '1 hour' } }, [{ endpoint: 'users' }], {
        'users?limit=2&offset=0': [{ id: 1 }, { id: 2 }],
        'users?limit=2&offset=2': [{ id: 3 }],
      });
      assert.deepEqual(run.requests, ['users?limit=2&offset=0', 'users?limit=2&offset=2']);
    });

    it('pages must be a JSON integer (a quoted number is a configuration error)', async () => {
      const { error, requests } = await api.failure(
        { ...offset2, forceStop: { pages: '2' } },
        [{ endpoint: 'users' }],
        {},
      );
      assert.deepEqual(requests, []);
      assert.match(
        error.message,
        /parameters\.api\.pagination\.forceStop\.pages: got "2"\. Expected the most requests per job: a number without quotes/,
      );
    });
  });

  describe('limitStop', () => {
    it('EX126: field scroller.count = 4 stops after the second page of 2', async () => {
      const run = await api.run(
        {
          method: 'offset',
          limitParam: 'count',
          offsetParam: 'skip',
          limit: '2',
          limitStop: { field: 'scroller.count' },
        },
        users,
        {
          'users?count=2&skip=0': { scroller: { count: 4 }, ...items(1, 2) },
          'users?count=2&skip=2': { scroller: { count: 4 }, ...items(3, 4) },
        },
      );
      assert.deepEqual(run.requests, ['users?count=2&skip=0', 'users?count=2&skip=2']);
      assert.match(run.logs, /limitStop: 4 of 4 records \(scroller\.count\)/);
    });

    it('EX127: count 3 stops once 3 records are reached', async () => {
      const run = await api.run({ method: 'pagenum', limitStop: { count: 3 } }, users, {
        'users?page=1': items(1, 2),
        'users?page=2': items(3, 4),
      });
      assert.deepEqual(run.requests, ['users?page=1', 'users?page=2']);
      assert.match(run.logs, /limitStop: 4 of 3 records/);
    });

    it('the count restarts for every job', async () => {
      const run = await api.run(
        { method: 'pagenum', limitStop: { count: '3' } },
        [{ endpoint: 'users' }, { endpoint: 'orders' }],
        {
          'users?page=1': [{ id: 1 }, { id: 2 }],
          'users?page=2': [{ id: 3 }],
          'orders?page=1': [{ id: 1 }, { id: 2 }],
          'orders?page=2': [{ id: 3 }],
        },
      );
      assert.deepEqual(run.requests, ['users?page=1', 'users?page=2', 'orders?page=1', 'orders?page=2']);
    });

    it('a numeric string total is compared as a number', async () => {
      const run = await api.run({ method: 'pagenum', limitStop: { field: 'total' } }, users, {
        'users?page=1': { total: '3', ...items(1, 2) },
        'users?page=2': { total: '3', ...items(3) },
      });
      assert.deepEqual(run.requests, ['users?page=1', 'users?page=2']);
    });

    it('field and count together are a configuration error', async () => {
      const { error } = await api.failure({ method: 'pagenum', limitStop: { field: 'total', count: 3 } }, users, {});
      assert.match(error.message, /parameters\.api\.pagination\.limitStop: has both 'field' and 'count'/);
    });
  });

  describe('decorator order', () => {
    // one page on which all three conditions would stop: the outermost (limitStop) is asked first
    const page = { 'users?limit=2&offset=0': { hasMore: false, ...items(1, 2) } };
    const all = {
      ...offset2,
      nextPageFlag: { field: 'hasMore', stopOn: false },
      forceStop: { pages: 1 },
      limitStop: { count: 2 },
    };

    it('limitStop, then forceStop, then nextPageFlag, then the method', async () => {
      assert.match(
        (await api.run(all, users, page)).logs,
        /stopped by cap limitStop\.count \(limitStop: 2 of 2 records\)/,
      );
      const { limitStop: _l, ...withoutLimit } = all;
      assert.match(
        (await api.run(withoutLimit, users, page)).logs,
        /stopped by cap forceStop\.pages \(forceStop: 1 page reached\)/,
      );
      const { forceStop: _f, ...flagOnly } = withoutLimit;
      assert.match((await api.run(flagOnly, users, page)).logs, /stopped: nextPageFlag: hasMore is false/);
    });
  });

  describe('with child jobs (each parent record gets a fresh copy of the parent pagination)', () => {
    const detail = (id: number) => ({ id, name: `user ${id}` });
    const child = {
      endpoint: 'user/{user-id}',
      dataField: '.',
      dataType: 'user-detail',
      placeholders: { 'user-id': 'id' },
    };

    it('EX138: pagenum + limitStop field; children stop after one page (the field is missing)', async () => {
      const page = (n: number, ...ids: number[]) => ({ ...items(...ids), paginator: { totalCount: 6, page: n } });
      const run = await api.run(
        {
          method: 'pagenum',
          limit: 2,
          limitParam: 'itemsPerPage',
          firstPageParams: false,
          limitStop: { field: 'paginator.totalCount' },
        },
        [{ ...users[0], children: [child] }],
        {
          users: page(1, 123, 234),
          'users?page=2&itemsPerPage=2': page(2, 345, 456),
          'users?page=3&itemsPerPage=2': page(3, 567, 678),
          ...Object.fromEntries([123, 234, 345, 456, 567, 678].map((id) => [`user/${id}`, detail(id)])),
        },
      );
      assert.deepEqual(run.requests, [
        'users',
        'user/123',
        'user/234',
        'users?page=2&itemsPerPage=2',
        'user/345',
        'user/456',
        'users?page=3&itemsPerPage=2',
        'user/567',
        'user/678',
      ]);
      assert.match(run.logs, /limitStop: paginator\.totalCount is not in the response \(1 record so far\)/);
      assert.equal(run.files.get('b.user-detail')!.split('\n').length, 8);
    });

    it('EX139: offset + nextPageFlag; children stop at once (no hasMore = ifNotSet = stopOn)', async () => {
      const run = await api.run(
        { ...offset2, firstPageParams: false, nextPageFlag: { field: 'hasMore', stopOn: false } },
        [{ ...users[0], children: [child] }],
        {
          users: { hasMore: true, ...items(1, 2) },
          'users?limit=2&offset=2': { hasMore: true, ...items(3, 4) },
          'users?limit=2&offset=4': { hasMore: false, ...items(5, 6) },
          ...Object.fromEntries([1, 2, 3, 4, 5, 6].map((id) => [`user/${id}`, detail(id)])),
        },
      );
      assert.deepEqual(run.requests, [
        'users',
        'user/1',
        'user/2',
        'users?limit=2&offset=2',
        'user/3',
        'user/4',
        'users?limit=2&offset=4',
        'user/5',
        'user/6',
      ]);
    });

    it('EX140: offset + forceStop pages 3; children stop on underflow', async () => {
      const run = await api.run(
        { ...offset2, firstPageParams: false, forceStop: { pages: 3, volume: 169 } },
        [{ ...users[0], children: [child] }],
        {
          users: items(1, 2),
          'users?limit=2&offset=2': items(3, 4),
          'users?limit=2&offset=4': items(5, 6),
          ...Object.fromEntries([1, 2, 3, 4, 5, 6].map((id) => [`user/${id}`, detail(id)])),
        },
      );
      assert.deepEqual(run.requests, [
        'users',
        'user/1',
        'user/2',
        'users?limit=2&offset=2',
        'user/3',
        'user/4',
        'users?limit=2&offset=4',
        'user/5',
        'user/6',
      ]);
      assert.match(
        run.logs,
        /Job 'users' finished: 3 pages, 6 records; stopped by cap forceStop\.pages \(forceStop: 3 pages reached\)/,
      );
    });

    // one parent record whose `tags` list fans out to two child runs sharing one paginator copy
    const tagged = [
      { ...users[0], children: [{ endpoint: 'items/{tag}', dataType: 'tagged', placeholders: { tag: 'tags' } }] },
    ];
    const parentPages = {
      'users?page=1&limit=2': {
        items: [
          { id: 1, tags: ['a', 'b'] },
          { id: 2, tags: ['c'] },
        ],
      },
      'users?page=2&limit=2': { items: [] },
    };
    const rows = (tag: string, ...ids: number[]) => ids.map((id) => ({ tag, id }));

    it('a stop condition does not reset the shared copy: the next placeholder value starts where it stopped (GE quirk)', async () => {
      const run = await api.run({ method: 'pagenum', limit: 2, limitStop: { count: 3 } }, tagged, {
        ...parentPages,
        'items/a?page=1&limit=2': rows('a', 1, 2),
        'items/a?page=2&limit=2': rows('a', 3, 4),
        'items/b?page=2&limit=2': rows('b', 1, 2),
        'items/b?page=3&limit=2': rows('b', 3),
        'items/c?page=1&limit=2': rows('c', 1),
      });
      assert.deepEqual(run.requests, [
        'users?page=1&limit=2',
        'items/a?page=1&limit=2',
        'items/a?page=2&limit=2', // limitStop: 4 of 3; the page number stays at 2
        'items/b?page=2&limit=2', // same parent record, same copy: starts at page 2
        'items/b?page=3&limit=2', // the record count restarted at the job's first request
        'items/c?page=1&limit=2', // another parent record: a fresh copy
        'users?page=2&limit=2',
      ]);
    });

    it("the method's own stop resets the shared copy: the next placeholder value starts at page 1", async () => {
      const run = await api.run({ method: 'pagenum', limit: 2, limitStop: { count: 10 } }, tagged, {
        ...parentPages,
        'items/a?page=1&limit=2': rows('a', 1, 2),
        'items/a?page=2&limit=2': rows('a', 3),
        'items/b?page=1&limit=2': rows('b', 1),
        'items/c?page=1&limit=2': rows('c', 1),
      });
      assert.deepEqual(run.requests, [
        'users?page=1&limit=2',
        'items/a?page=1&limit=2',
        'items/a?page=2&limit=2',
        'items/b?page=1&limit=2',
        'items/c?page=1&limit=2',
        'users?page=2&limit=2',
      ]);
    });
  });
});
