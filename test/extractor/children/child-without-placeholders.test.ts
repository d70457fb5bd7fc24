import assert from 'node:assert/strict';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { runExtraction } from '../../support/extraction.js';

describe('a child job without placeholders (as GE runs it)', () => {
  let server: FixtureServer;

  before(async () => {
    server = await startFixtureServer({
      handler: () => ({ body: '{"items":[{"id":1,"name":"a"},{"id":2,"name":"b"}]}' }),
    });
  });
  after(() => server.close());
  beforeEach(() => (server.requests.length = 0));

  it('is never run: one warning per parent record that passes its recursionFilter, no request, no table', async () => {
    const run = await runExtraction({
      api: { baseUrl: `${server.url}/` },
      config: {
        jobs: [
          {
            endpoint: 'users',
            children: [
              { endpoint: 'other', dataType: 'd2' },
              { endpoint: 'empty', dataType: 'd3', placeholders: {} },
              { endpoint: 'list', dataType: 'd5', placeholders: [] },
              { endpoint: 'text', dataType: 'd6', placeholders: '' },
              { endpoint: 'filtered', dataType: 'd4', recursionFilter: 'id!=1' },
            ],
          },
        ],
      },
    });
    // GE 7.4 on the same configuration: only GET /users, and these warnings in this order
    assert.deepEqual(
      server.requests.map((r) => r.url),
      ['/users'],
    );
    const warnings = run.logs
      .split('\n')
      .filter((line) => line.includes("No 'placeholders'"))
      .map((line) => line.replace(/^.*WARN\s+/, ''));
    assert.deepEqual(warnings, [
      "No 'placeholders' set for 'other'",
      "No 'placeholders' set for 'other'",
      "No 'placeholders' set for 'empty'",
      "No 'placeholders' set for 'empty'",
      "No 'placeholders' set for 'list'",
      "No 'placeholders' set for 'list'",
      "No 'placeholders' set for 'text'",
      "No 'placeholders' set for 'text'",
      "No 'placeholders' set for 'filtered'",
    ]);
    assert.deepEqual([...run.files.keys()], ['users', 'users.manifest']);
    assert.equal(run.files.get('users'), '"id","name"\n"1","a"\n"2","b"\n');
  });

  it('still runs a child whose endpoint has no {placeholder} but that sets placeholders (parent_id column added)', async () => {
    const run = await runExtraction({
      api: { baseUrl: `${server.url}/` },
      config: {
        jobs: [{ endpoint: 'users', children: [{ endpoint: 'detail', dataType: 'd1', placeholders: { id: 'id' } }] }],
      },
    });
    assert.deepEqual(
      server.requests.map((r) => r.url),
      ['/users', '/detail', '/detail'],
    );
    assert.equal(run.files.get('d1'), '"id","name","parent_id"\n"1","a","1"\n"2","b","1"\n"1","a","2"\n"2","b","2"\n');
  });

  it('runs under another child with the values it inherits (GE example 027 shape): a warning per parent record, then the run', async () => {
    const run = await runExtraction({
      api: { baseUrl: `${server.url}/` },
      config: {
        jobs: [
          {
            endpoint: 'users',
            children: [
              {
                endpoint: 'user/{user-id}',
                dataType: 'detail',
                placeholders: { 'user-id': 'id' },
                recursionFilter: 'id==1',
                children: [
                  // no own placeholders: {user-id} inherited; three levels deep, a name shadowing the ancestor's
                  {
                    endpoint: 'user/{user-id}/orders',
                    dataType: 'orders',
                    children: [
                      { endpoint: 'o/{user-id}/{n}', dataType: 'deep', placeholders: { n: 'id', 'user-id': 'name' } },
                    ],
                  },
                ],
              },
            ],
          },
        ],
      },
    });
    // GE 7.4 on the same configuration
    assert.deepEqual(
      server.requests.map((r) => r.url),
      ['/users', '/user/1', '/user/1/orders', '/o/a/1', '/o/b/2', '/user/1/orders', '/o/a/1', '/o/b/2'],
    );
    const warnings = run.logs
      .split('\n')
      .filter((line) => line.includes("No 'placeholders'"))
      .map((line) => line.replace(/^.*WARN\s+/, ''));
    assert.deepEqual(warnings, [
      "No 'placeholders' set for 'user/{user-id}/orders'",
      "No 'placeholders' set for 'user/{user-id}/orders'",
    ]);
    assert.equal(
      run.files.get('orders'),
      '"id","name","parent_id"\n"1","a","1"\n"2","b","1"\n"1","a","1"\n"2","b","1"\n',
    );
    // the shadowing own value stays at the ancestor's place: parent_name before parent_id
    assert.equal(
      run.files.get('deep'),
      `"id","name","parent_name","parent_id"\n${'"1","a","a","1"\n"2","b","a","1"\n"1","a","b","2"\n"2","b","b","2"\n'.repeat(2)}`,
    );
  });

  it('still refuses placeholders that are neither an object nor PHP-empty, before any request', async () => {
    await assert.rejects(
      runExtraction({
        api: { baseUrl: `${server.url}/` },
        config: { jobs: [{ endpoint: 'users', children: [{ endpoint: 'x', placeholders: 5 }] }] },
      }),
      (error: Error) =>
        error.name === 'ConfigError' && error.message.includes('parameters.config.jobs[0].children[0].placeholders'),
    );
    assert.equal(server.requests.length, 0);
  });
});
