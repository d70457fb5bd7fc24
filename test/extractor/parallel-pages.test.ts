import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { runExtraction, type ExtractionRun } from '../support/extraction.js';
import { InFlight } from '../support/in-flight.js';
import { stateFileText } from '../../src/extractor/extractor-state.js';

/**
 * Parallel page fetching (api.pagination.concurrency) must not change anything but speed: the
 * same tables byte for byte, the same stop, caps absolute — proved against a real server with
 * latency, where parallel requests really overlap.
 */
describe('parallel page fetching', () => {
  let server: FixtureServer;
  const flight = new InFlight();
  let throttle = Infinity;
  let throttled = 0;
  const TOTAL = 95;

  before(async () => {
    server = await startFixtureServer({
      handler: (r) =>
        flight.around(async () => {
          if (flight.now > throttle) {
            throttled++;
            return { status: 429, body: { error: 'slow down' } };
          }
          await sleep(15);
          const url = new URL(r.url, 'http://x');
          const limit = Number(url.searchParams.get('limit') ?? 10);
          const offset = url.searchParams.has('offset')
            ? Number(url.searchParams.get('offset'))
            : (Number(url.searchParams.get('page') ?? 1) - 1) * limit;
          if (url.pathname === '/items') {
            const items = [];
            for (let i = offset; i < Math.min(TOTAL, offset + limit); i++)
              items.push({ id: i, tags: i % 3 ? ['a', `t${i % 4}`] : [], owner: { n: i % 7, v: i / 8 } });
            return { body: { items } };
          }
          const detail = /^\/items\/(\d+)$/.exec(url.pathname);
          if (detail) return { body: { id: Number(detail[1]), detail: `d${detail[1]}` } };
          return undefined;
        }),
    });
  });
  after(() => server.close());
  beforeEach(async () => {
    await flight.quiet();
    server.requests.length = 0;
    throttle = Infinity;
    throttled = 0;
  });

  const parameters = (pagination: Record<string, unknown>, job: Record<string, unknown> = {}) => ({
    api: { baseUrl: `${server.url}/`, pagination, retryConfig: { backoffBase: 0.01 } },
    config: { outputBucket: 'p', jobs: [{ endpoint: 'items', dataField: 'items', ...job }] },
  });

  function sameOutput(a: ExtractionRun, b: ExtractionRun): void {
    assert.deepEqual([...b.files.keys()], [...a.files.keys()]);
    for (const [file, content] of a.files) assert.equal(b.files.get(file), content, `${file} differs`);
    assert.equal(stateFileText(b.result.state), stateFileText(a.result.state));
  }

  for (const [name, pagination] of [
    ['pagenum', { method: 'pagenum', limit: 10 }],
    ['offset', { method: 'offset', limit: 10 }],
  ] as const) {
    it(`${name}: 8 pages in flight write the same tables as a sequential run`, async () => {
      const sequential = await runExtraction(parameters(pagination));
      assert.equal(flight.max, 1);
      const sequentialRequests = server.requests.map((r) => r.url);
      server.requests.length = 0;
      flight.max = 0;
      const parallel = await runExtraction(parameters({ ...pagination, concurrency: 8 }));
      assert.ok(flight.max > 1 && flight.max <= 8, `requests overlapped (${flight.max} at once)`);
      sameOutput(sequential, parallel);
      assert.equal(parallel.files.get('p.items')!.split('\n').length - 2, TOTAL);
      // every page the sequential run needed was requested; extra ones lie past the end
      const parallelRequests = new Set(server.requests.map((r) => r.url));
      for (const url of sequentialRequests) assert.ok(parallelRequests.has(url), url);
      assert.match(parallel.logs, /stopped: underflow: the page had 5 records, less than the limit 10/);
    });
  }

  it('children run in page order with the same output', async () => {
    const job = {
      children: [
        {
          endpoint: 'items/{id}',
          dataType: 'detail',
          dataField: '.',
          placeholders: { id: 'id' },
          recursionFilter: 'id<25',
        },
      ],
    };
    const sequential = await runExtraction(parameters({ method: 'pagenum', limit: 10, forceStop: { pages: 1 } }, job));
    const parallel = await runExtraction(
      parameters({ method: 'pagenum', limit: 10, forceStop: { pages: 1 }, concurrency: 6 }, job),
    );
    sameOutput(sequential, parallel);
  });

  it('a page cap stays absolute: nothing is requested beyond forceStop.pages', async () => {
    const run = await runExtraction(
      parameters({ method: 'pagenum', limit: 10, concurrency: 8, forceStop: { pages: 3 } }),
    );
    assert.deepEqual(server.requests.map((r) => r.url).sort(), [
      '/items?page=1&limit=10',
      '/items?page=2&limit=10',
      '/items?page=3&limit=10',
    ]);
    assert.equal(run.files.get('p.items')!.split('\n').length - 2, 30);
  });

  it('backs off when the API throttles (429) and still writes the same tables', async () => {
    const sequential = await runExtraction(parameters({ method: 'offset', limit: 10 }));
    throttle = 2;
    const parallel = await runExtraction(parameters({ method: 'offset', limit: 10, concurrency: 8 }));
    assert.ok(throttled > 0, 'the server throttled some requests');
    sameOutput(sequential, parallel);
  });
});
