import assert from 'node:assert/strict';
import nock from 'nock';
import { UserError } from '../../../src/common/errors.js';
import type { Clock } from '../../../src/store/remote/retry-budget.js';
import { HttpTableSource, MAX_PREVIEW_BYTES, previewQuery } from '../../../src/store/remote/http-table-source.js';

const URL = 'http://storage.test';

/** A table as Keboola's Storage API describes it (GET /v2/storage/tables/{id}). */
const TABLE = {
  uri: `${URL}/v2/storage/tables/in.c-shop.users`,
  id: 'in.c-shop.users',
  name: 'users',
  displayName: 'users',
  transactional: false,
  primaryKey: ['id'],
  created: '2025-01-01T00:00:00+0100',
  lastImportDate: '2025-01-02T00:00:00+0100',
  lastChangeDate: '2025-01-03T00:00:00+0100',
  rowsCount: 2,
  dataSizeBytes: 1024,
  isAlias: false,
  columns: ['id', 'name'],
  attributes: [],
  metadata: [],
  columnMetadata: {},
  bucket: {
    uri: `${URL}/v2/storage/buckets/in.c-shop`,
    id: 'in.c-shop',
    name: 'c-shop',
    stage: 'in',
    description: '',
    created: '2025-01-01T00:00:00+0100',
  },
};

const userError = (pattern: RegExp) => (e: unknown) => {
  assert.ok(e instanceof UserError, `a UserError, not ${String(e)}`);
  assert.match(e.message, pattern);
  return true;
};

/** A clock whose sleeps only move its time. */
function fakeClock(): Clock & { slept: number[] } {
  let now = 0;
  const slept: number[] = [];
  return { slept, now: () => now, sleep: async (ms) => void (slept.push(ms), (now += ms)) };
}

describe('HTTP table source: Keboola table API (nock)', () => {
  const source = (clock?: Clock) =>
    new HttpTableSource({ url: URL, token: 'tok-1', retryBaseMs: 1, maxRetries: 2, jobClock: clock });
  afterEach(() => nock.cleanAll());

  it("lists tables with their columns (include=columns), sorted, decoding Keboola's shape", async () => {
    const other = {
      ...TABLE,
      id: 'in.c-a.x',
      name: 'x',
      rowsCount: null,
      lastChangeDate: null,
      bucket: { id: 'in.c-a' },
    };
    nock(URL, { reqheaders: { 'x-storageapi-token': 'tok-1' } })
      .get('/v2/storage/tables')
      .query({ include: 'columns' })
      .reply(200, [TABLE, other]);
    const tables = await source().listTables();
    assert.deepEqual(tables, [
      {
        id: 'in.c-a.x',
        bucketId: 'in.c-a',
        name: 'x',
        columns: ['id', 'name'],
        primaryKey: ['id'],
        rowsCount: 0,
        dataSizeBytes: 1024,
        created: TABLE.created,
        lastImportDate: TABLE.lastImportDate,
        lastChangeDate: null,
        metadata: [],
        columnMetadata: new Map(),
      },
      {
        id: 'in.c-shop.users',
        bucketId: 'in.c-shop',
        name: 'users',
        columns: ['id', 'name'],
        primaryKey: ['id'],
        rowsCount: 2,
        dataSizeBytes: 1024,
        created: TABLE.created,
        lastImportDate: TABLE.lastImportDate,
        lastChangeDate: TABLE.lastChangeDate,
        metadata: [],
        columnMetadata: new Map(),
      },
    ]);
  });

  it("lists one bucket's tables; an unknown bucket is a clear error naming the server", async () => {
    nock(URL).get('/v2/storage/buckets/in.c-shop/tables').query({ include: 'columns' }).reply(200, [TABLE]);
    assert.equal((await source().listTables('in.c-shop')).length, 1);
    nock(URL)
      .get('/v2/storage/buckets/in.c-none/tables')
      .query(true)
      .reply(404, { error: 'Bucket in.c-none not found', code: 'storage.buckets.notFound', status: 'error' });
    await assert.rejects(
      source().listTables('in.c-none'),
      userError(
        /^Bucket in\.c-none does not exist in the project of the Storage API at http:\/\/storage\.test \(Bucket in\.c-none not found \[storage\.buckets\.notFound\]\)\.$/,
      ),
    );
    await assert.rejects(
      source().listTables('in.c-a/../x'),
      userError(/Bucket id in\.c-a\/\.\.\/x is not of the form/),
    );
  });

  it('sends data-preview parameters as Keboola names them and reads the CSV, quotes and line breaks included', async () => {
    let path = '';
    nock(URL)
      .get((p) => p.startsWith('/v2/storage/tables/in.c-shop.users/data-preview'))
      .reply(200, function (uri) {
        path = uri;
        return '"id","name"\n"1","a ""quoted""\nline"\n"2",""\n';
      });
    const preview = await source().preview('in.c-shop.users', {
      limit: 5,
      columns: ['id', 'name'],
      whereColumn: 'id',
      whereValues: ['1', '2,3'],
      whereOperator: 'ne',
      changedSince: new Date('2025-01-01T00:00:00Z'),
    });
    assert.deepEqual(preview, {
      columns: ['id', 'name'],
      rows: [
        ['1', 'a "quoted"\nline'],
        ['2', ''],
      ],
    });
    const query = new globalThis.URL(path, URL).searchParams;
    assert.equal(query.get('limit'), '5');
    assert.equal(query.get('columns'), 'id,name');
    assert.equal(query.get('whereColumn'), 'id');
    assert.deepEqual(query.getAll('whereValues[]'), ['1', '2,3']);
    assert.equal(query.get('whereOperator'), 'ne');
    assert.equal(query.get('changedSince'), '1735689600');
  });

  it('sends a changedSince a Storage API reads as the same moment: Unix seconds, an ISO date before 1970, none before year 0', () => {
    const since = (changedSince: Date) => previewQuery({ changedSince }).get('changedSince');
    assert.equal(since(new Date('2025-01-01T00:00:00Z')), '1735689600');
    assert.equal(since(new Date('1900-05-01T10:00:00Z')), '1900-05-01T10:00:00.000Z');
    assert.equal(since(new Date(8.64e15)), '8640000000000');
    assert.equal(since(new Date(-8.64e15)), null, 'every row changed since a moment before year 0: no filter');
    assert.equal(since(new Date('-000001-06-01T00:00:00Z')), null);
  });

  it('encodes a hostile table id as one path segment and refuses ids that are not table ids before sending anything', async () => {
    let path = '';
    nock(URL)
      .get(/.*/)
      .reply(404, function (uri) {
        path = uri;
        return { error: 'Table not found', code: 'storage.tables.notFound' };
      });
    await assert.rejects(
      source().table('in.c-a.../../tokens?x=#y'),
      userError(/^Table in\.c-a\.\.\.\/\.\.\/tokens\?x=#y does not exist/),
    );
    assert.equal(path, '/v2/storage/tables/in.c-a...%2F..%2Ftokens%3Fx%3D%23y');
    nock.cleanAll();
    const scope = nock(URL).get(/.*/).reply(200, TABLE);
    await assert.rejects(
      source().table('in.c-a.b\u001b[31m'),
      userError(/the table name of "in\.c-a\.b\\u001b\[31m" contains a control or invisible character/),
    );
    await assert.rejects(source().table(`in.c-a.${'x'.repeat(5000)}`), userError(/is longer than 1000 characters/));
    await assert.rejects(source().table('../../etc'), userError(/is not a table id of the form/));
    assert.ok(!scope.isDone(), 'nothing was sent');
  });

  it("maps refusals to one safe line: a server's message with control characters is escaped", async () => {
    nock(URL)
      .get('/v2/storage/tables/in.c-a.t/data-preview')
      .query(true)
      .reply(400, { error: 'Column "x\u001b[2J" not found\nfake line', code: 'storage.tables.columnNotFound' });
    await assert.rejects(source().preview('in.c-a.t', { columns: ['x'] }), (e: unknown) => {
      assert.ok(e instanceof UserError);
      assert.ok(!/[\u0000-\u001f]/.test(e.message), e.message);
      assert.match(
        e.message,
        /refused GET of table in\.c-a\.t: "Column \\"x\\u001b\[2J\\" not found\\nfake line" \[storage\.tables\.columnNotFound\]/,
      );
      return true;
    });
    nock(URL)
      .get('/v2/storage/tables/in.c-a.t')
      .reply(401, { error: 'Invalid access token', code: 'storage.tokenInvalid' });
    await assert.rejects(
      source().table('in.c-a.t'),
      userError(
        /The Storage API at http:\/\/[\w.:]+ refused the token( from KBC_TOKEN)?: Invalid access token \[storage\.tokenInvalid\]\. Pass a valid token with --token \(or set KBC_TOKEN\)\./,
      ),
    );
    nock(URL).delete('/v2/storage/tables/in.c-a.t').reply(403, { error: 'no', code: 'accessDenied' });
    await assert.rejects(source().deleteTable('in.c-a.t'), userError(/The token may not delete table in\.c-a\.t/));
  });

  it('refuses a preview limit Keboola would refuse, and a malformed or oversized answer', async () => {
    await assert.rejects(
      source().preview('in.c-a.t', { limit: 1001 }),
      userError(/limit must be an integer from 0 to 1000/),
    );
    nock(URL).get('/v2/storage/tables/in.c-a.t/data-preview').query(true).reply(200, '"a","b"\n"1"\n');
    await assert.rejects(source().preview('in.c-a.t', {}), userError(/row 1 has 1 fields for 2 columns/));
    nock(URL).get('/v2/storage/tables/in.c-a.t/data-preview').query(true).reply(200, '"a\n');
    await assert.rejects(source().preview('in.c-a.t', {}), userError(/invalid CSV/));
    const big = Buffer.alloc(MAX_PREVIEW_BYTES + 1024 * 1024, 'a');
    nock(URL).get('/v2/storage/tables/in.c-a.t/data-preview').query(true).reply(200, big);
    await assert.rejects(
      source().preview('in.c-a.t', {}),
      userError(/with more than 67108864 bytes; ask for fewer rows or columns/),
    );
    nock(URL).get('/v2/storage/tables').query(true).reply(200, { not: 'a list' });
    await assert.rejects(
      source().listTables(),
      userError(/answered GET tables with something other than a list of tables/),
    );
  });

  it('reads a whole table through data-preview when it fits, and refuses rather than cut one that does not', async () => {
    nock(URL).get('/v2/storage/tables/in.c-shop.users').reply(200, TABLE);
    nock(URL)
      .get('/v2/storage/tables/in.c-shop.users/data-preview')
      .query({ limit: '1000' })
      .reply(200, '"id","name"\n"1","a"\n"2","b"\n');
    const batches: string[][][] = [];
    assert.deepEqual(await source().read('in.c-shop.users', {}, async (b) => void batches.push(b)), ['id', 'name']);
    assert.deepEqual(batches, [
      [
        ['1', 'a'],
        ['2', 'b'],
      ],
    ]);

    const rows = Array.from({ length: 1000 }, (_, i) => `"${i}","x"\n`).join('');
    nock(URL)
      .get('/v2/storage/tables/in.c-shop.users')
      .reply(200, { ...TABLE, rowsCount: 5000 });
    nock(URL)
      .get('/v2/storage/tables/in.c-shop.users/data-preview')
      .query({ limit: '1000' })
      .reply(200, `"id","name"\n${rows}`);
    let called = false;
    await assert.rejects(
      source().read('in.c-shop.users', {}, async () => void (called = true)),
      userError(
        /has 5000 rows, and the Storage API at http:\/\/storage\.test returns at most 1000 rows over HTTP \(data-preview\): gex does not write a partial export\. Run "gex tables export" on the server's own store/,
      ),
    );
    assert.equal(called, false, 'no row was handed on');

    // a filter that matches fewer rows than a preview returns is complete
    nock(URL)
      .get('/v2/storage/tables/in.c-shop.users')
      .reply(200, { ...TABLE, rowsCount: 5000 });
    nock(URL).get('/v2/storage/tables/in.c-shop.users/data-preview').query(true).reply(200, '"id","name"\n"7","x"\n');
    assert.deepEqual(
      await source().read('in.c-shop.users', { whereColumn: 'id', whereValues: ['7'] }, async () => undefined),
      ['id', 'name'],
    );
    // a limit within a preview's needs no detail
    nock(URL)
      .get('/v2/storage/tables/in.c-shop.users/data-preview')
      .query({ limit: '10' })
      .reply(200, '"id","name"\n"1","a"\n');
    await source().read('in.c-shop.users', { limit: 10 }, async () => undefined);
  });

  it('deletes a table and a bucket (force only when asked), waiting for an asynchronous job', async () => {
    nock(URL).delete('/v2/storage/tables/in.c-shop.users').reply(204);
    await source().deleteTable('in.c-shop.users');
    nock(URL).delete('/v2/storage/buckets/in.c-shop').query({}).reply(204);
    await source().deleteBucket('in.c-shop', false);
    nock(URL).delete('/v2/storage/buckets/in.c-shop').query({ force: '1' }).reply(202, { id: 42, status: 'waiting' });
    nock(URL).get('/v2/storage/jobs/42').reply(200, { id: 42, status: 'processing' });
    nock(URL).get('/v2/storage/jobs/42').reply(200, { id: 42, status: 'success' });
    const clock = fakeClock();
    await source(clock).deleteBucket('in.c-shop', true);
    assert.deepEqual(clock.slept, [1000, 1000]);
    assert.ok(nock.isDone());

    nock(URL).delete('/v2/storage/tables/in.c-shop.users').reply(202, { id: 43, status: 'waiting' });
    nock(URL)
      .get('/v2/storage/jobs/43')
      .reply(200, { id: 43, status: 'error', error: { message: 'Table is used by an alias\u001b[0m' } });
    await assert.rejects(
      source(fakeClock()).deleteTable('in.c-shop.users'),
      userError(/failed deleting table in\.c-shop\.users \(job 43\): "Table is used by an alias\\u001b\[0m"$/),
    );
    nock(URL).delete('/v2/storage/tables/in.c-shop.users').reply(202, { id: '../tokens', status: 'waiting' });
    await assert.rejects(
      source(fakeClock()).deleteTable('in.c-shop.users'),
      userError(/something other than a job with a numeric id/),
    );
    nock(URL).delete('/v2/storage/tables/in.c-shop.users').reply(202, { id: 44, status: 'waiting' });
    nock(URL).get('/v2/storage/jobs/44').times(200).reply(200, { id: 44, status: 'processing' });
    await assert.rejects(
      source(fakeClock()).deleteTable('in.c-shop.users'),
      userError(/is still deleting table in\.c-shop\.users after 120 s \(job 44\)/),
    );
  });
});
