import assert from 'node:assert/strict';
import { startFixtureServer, type FixtureServer } from '../../../src/fixture-server/fixture-server.js';
import { runExtraction } from '../../support/extraction.js';

describe('a child job without placeholders (as GE runs it)', () => {
  let server: FixtureServer;

  before(async () => {
    server = await startFixtureServer({ handler: () => ({ body: '{"items":[{"id":1,"name":"a"},{"id":2,"name":"b"}]}' }) });
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
    assert.deepEqual(server.requests.map((r) => r.url), ['/users']);
    const warnings = run.logs.split('\n').filter((line) => line.includes("No 'placeholders'")).map((line) => line.replace(/^.*WARN\s+/, ''));
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
      config: { jobs: [{ endpoint: 'users', children: [{ endpoint: 'detail', dataType: 'd1', placeholders: { id: 'id' } }] }] },
    });
    assert.deepEqual(server.requests.map((r) => r.url), ['/users', '/detail', '/detail']);
    assert.equal(run.files.get('d1'), '"id","name","parent_id"\n"1","a","1"\n"2","b","1"\n"1","a","2"\n"2","b","2"\n');
  });

  it('still refuses placeholders that are neither an object nor PHP-empty, before any request', async () => {
    await assert.rejects(
      runExtraction({ api: { baseUrl: `${server.url}/` }, config: { jobs: [{ endpoint: 'users', children: [{ endpoint: 'x', placeholders: 5 }] }] } }),
      (error: Error) => error.name === 'ConfigError' && error.message.includes('parameters.config.jobs[0].children[0].placeholders'),
    );
    assert.equal(server.requests.length, 0);
  });
});
