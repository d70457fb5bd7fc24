import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { stateFileText } from '../../src/extractor/extractor-state.js';
import { runExtraction } from '../support/extraction.js';

/**
 * `api.http.maxRequestsPerSecond` against a real server with parallel pages: the requests of every
 * job (and every page in flight) arrive no faster than the rate, and the tables are the same as
 * without the limit. Measured with the real clock, so the bounds carry a small tolerance for
 * scheduling jitter on localhost.
 */
describe('proactive rate limit (api.http.maxRequestsPerSecond), real server', () => {
  let server: FixtureServer;
  let arrivals: number[] = [];
  const TOTAL = 65;

  before(async () => {
    server = await startFixtureServer({
      handler: (r) => {
        arrivals.push(performance.now());
        const url = new URL(r.url, 'http://x');
        if (url.pathname === '/items') {
          const limit = Number(url.searchParams.get('limit') ?? 10);
          const offset = (Number(url.searchParams.get('page') ?? 1) - 1) * limit;
          const items = [];
          for (let i = offset; i < Math.min(TOTAL, offset + limit); i++) items.push({ id: i, name: `n${i}` });
          return { body: { items } };
        }
        if (url.pathname === '/status') return { body: { ok: true } };
        return undefined;
      },
    });
  });
  after(() => server.close());
  beforeEach(() => {
    arrivals = [];
  });

  const parameters = (http: Record<string, unknown>) => ({
    api: { baseUrl: `${server.url}/`, pagination: { method: 'pagenum', limit: 10, concurrency: 4 }, http },
    config: {
      outputBucket: 'r',
      jobs: [
        { endpoint: 'items', dataField: 'items' },
        { endpoint: 'status', dataType: 'status' },
      ],
    },
  });

  it('never exceeds 10 requests per second with 4 pages in flight, across jobs, and writes the same tables', async () => {
    const free = await runExtraction(parameters({}));
    const freeSpan = arrivals[arrivals.length - 1] - arrivals[0];
    arrivals = [];
    const limited = await runExtraction(parameters({ maxRequestsPerSecond: 10 }));
    const times = [...arrivals].sort((a, b) => a - b);
    // 7 pages (the 7th is short), the status job, and any page predicted ahead
    assert.ok(times.length >= 8, `${times.length} requests`);
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    // sent 100 ms apart: any k later requests arrive at least (k − 1) × 100 ms later — the arrival of one
    // request may lag by up to an interval on a loaded machine (the server shares the test's event loop),
    // which shortens one gap but can never put k + 1 requests into k intervals' time; the exact
    // schedule is rate-limiter.test.ts's, on a fake clock
    for (let i = 0; i < times.length; i++)
      for (let j = i + 1; j < times.length; j++)
        assert.ok(
          times[j] - times[i] >= (j - i - 1) * 100,
          `requests ${i + 1}…${j + 1}: ${j - i} in ${(times[j] - times[i]).toFixed(0)} ms (gaps ${gaps.map((g) => g.toFixed(0)).join(', ')} ms)`,
        );
    const span = times[times.length - 1] - times[0];
    assert.ok(span >= (times.length - 2) * 100, `${times.length} requests in ${span.toFixed(0)} ms`);
    assert.ok(
      freeSpan < span / 2,
      `without the limit the run is faster (${freeSpan.toFixed(0)} ms vs ${span.toFixed(0)} ms)`,
    );
    assert.deepEqual([...limited.files.keys()], [...free.files.keys()]);
    for (const [file, content] of free.files) assert.equal(limited.files.get(file), content, `${file} differs`);
    assert.equal(stateFileText(limited.result.state), stateFileText(free.result.state));
  });

  it('refuses a rate that is not a positive number, naming the key', async () => {
    for (const bad of [0, -2, '5', 'fast']) {
      await assert.rejects(
        runExtraction(parameters({ maxRequestsPerSecond: bad })),
        /Invalid configuration at parameters\.api\.http\.maxRequestsPerSecond: got .*Expected a positive number of requests per second/,
      );
    }
    assert.equal(arrivals.length, 0, 'nothing was requested');
  });
});
