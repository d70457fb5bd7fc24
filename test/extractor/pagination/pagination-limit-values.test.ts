import assert from 'node:assert/strict';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { runExtraction } from '../../support/extraction.js';

/** How a `limit` written as a string reaches the API: GE always sends the integer. */
describe('pagination limit given as a numeric string (as GE sends it)', () => {
  let server: FixtureServer;

  before(async () => {
    // one record: fewer than any limit below, so every job makes one request
    server = await startFixtureServer({ handler: () => ({ body: '{"items":[{"id":1}]}' }) });
  });
  after(() => server.close());
  beforeEach(() => (server.requests.length = 0));

  async function sent(scrollers: Record<string, unknown>, jobs: Array<Record<string, unknown>>) {
    await runExtraction({
      api: { baseUrl: `${server.url}/`, pagination: { method: 'multiple', scrollers } },
      config: { jobs: jobs.map((job) => ({ dataType: job.endpoint, ...job })) },
    });
    return server.requests.map((r) => `${r.method} ${r.url} ${r.body}`.trimEnd());
  }

  it('sends pagenum and offset limits as JSON numbers in POST bodies, and as integers in queries and forms', async () => {
    const scrollers = {
      pagenum: { method: 'pagenum', limit: '10' },
      exponent: { method: 'pagenum', limit: '1e1' },
      padded: { method: 'pagenum', limit: '02' },
      offset: { method: 'offset', limit: '10' },
    };
    const requests = await sent(scrollers, [
      { endpoint: 'p1', method: 'POST', scroller: 'pagenum', params: { q: 'x' } },
      { endpoint: 'p2', method: 'POST', scroller: 'exponent' },
      { endpoint: 'p3', method: 'POST', scroller: 'pagenum', params: { limit: '5' } },
      { endpoint: 'o1', method: 'POST', scroller: 'offset', params: { q: 'x' } },
      { endpoint: 'g1', scroller: 'padded' },
      { endpoint: 'g2', scroller: 'padded', params: { limit: '03' } },
      { endpoint: 'f1', method: 'FORM', scroller: 'exponent' },
    ]);
    // what GE 7.4 sent for the same configuration
    assert.deepEqual(requests, [
      'POST /p1 {"q":"x","page":1,"limit":10}',
      'POST /p2 {"page":1,"limit":10}',
      'POST /p3 {"limit":5,"page":1}',
      'POST /o1 {"q":"x","limit":10,"offset":0}',
      'GET /g1?page=1&limit=2',
      'GET /g2?limit=3&page=1',
      'POST /f1 page=1&limit=10',
    ]);
  });
});
