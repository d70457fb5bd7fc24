import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  startFixtureServer,
  type FixtureServer,
  type RecordedRequest,
} from '../support/fixture-server/fixture-server.js';
import { stateFileText } from '../../src/extractor/extractor-state.js';
import { runExtraction, type ExtractionRun } from '../support/extraction.js';
import { InFlight } from '../support/in-flight.js';

/**
 * Child jobs fetched ahead (`concurrency` on a child job) must change nothing but speed: the same
 * tables byte for byte, the same state, the same set of requests and the same log story as a
 * sequential run — with stop conditions, recursion filters, several placeholder combinations
 * sharing a paginator, repeated pages and grandchildren. The API answers after a latency that
 * differs per URL, so parallel responses really arrive out of order.
 */
describe('parallel child jobs', function () {
  this.timeout(60_000);
  let server: FixtureServer;
  const flight = new InFlight();
  let throttleAbove = Infinity;
  let throttled = 0;
  /** requests per path family in flight */
  const peak = new Map<string, InFlight>();
  let failOn: string | undefined;
  /** requests answered (not throttled), as the API saw them */
  const served: string[] = [];

  const PARENTS = 23;
  const latencyOf = (url: string) => createHash('md5').update(url).digest()[0] % 12;
  const family = (path: string) =>
    path.startsWith('/parents/')
      ? path.includes('/tags/')
        ? 'tags'
        : 'items'
      : path.startsWith('/notes/')
        ? 'notes'
        : 'parents';

  function page<T>(all: T[], url: URL, extra: (shown: T[], offset: number) => Record<string, unknown> = () => ({})) {
    const limit = Number(url.searchParams.get('limit') ?? 10);
    const offset = (Number(url.searchParams.get('page') ?? 1) - 1) * limit;
    const shown = all.slice(offset, offset + limit);
    return { items: shown, total: all.length, more: offset + limit < all.length, ...extra(shown, offset) };
  }

  function answer(request: RecordedRequest) {
    const url = new URL(request.url, 'http://x');
    const path = url.pathname;
    if (failOn !== undefined && path === failOn) return { status: 404, body: { error: 'gone' } };
    if (path === '/parents') {
      const all = Array.from({ length: PARENTS }, (_, i) => ({
        id: i + 1,
        kind: i % 3 === 0 ? 'admin' : 'user',
        tags: i % 4 === 0 ? ['a', 'b'] : ['c'],
        owner: { n: i % 5 },
      }));
      return { body: page(all, url) };
    }
    let m = /^\/parents\/(\d+)\/items$/.exec(path);
    if (m) {
      const id = Number(m[1]);
      const all = Array.from({ length: id % 13 }, (_, n) => ({
        key: `${id}-${n}`,
        n,
        nested: { deep: [{ v: id }, { v: n }] },
      }));
      // every fifth parent's API ignores the page number: the second page repeats the first
      if (id % 5 === 0) url.searchParams.set('page', '1');
      return { body: page(all, url) };
    }
    m = /^\/parents\/(\d+)\/tags\/(\w+)$/.exec(path);
    if (m)
      return {
        body: page(
          [
            { tag: m[2], of: Number(m[1]) },
            { tag: `${m[2]}2`, of: Number(m[1]) },
          ],
          url,
        ),
      };
    m = /^\/notes\/([\w-]+)$/.exec(path);
    if (m) return { body: page([{ note: `note of ${m[1]}` }], url) };
    return undefined;
  }

  before(async () => {
    server = await startFixtureServer({
      handler: (request) => {
        const path = new URL(request.url, 'http://x').pathname;
        const counter = peak.get(family(path)) ?? new InFlight();
        peak.set(family(path), counter);
        return flight.around(() =>
          counter.around(async () => {
            if (flight.now > throttleAbove) {
              throttled++;
              return { status: 429, headers: { 'Retry-After': '0' }, body: { error: 'slow down' } };
            }
            await sleep(latencyOf(request.url));
            served.push(`${request.method} ${request.url}`);
            return answer(request);
          }),
        );
      },
    });
  });
  after(() => server.close());
  beforeEach(async () => {
    await flight.quiet();
    reset();
    throttleAbove = Infinity;
    throttled = 0;
    failOn = undefined;
  });

  function reset(): void {
    served.length = 0;
    flight.max = 0;
    peak.clear();
  }

  interface Shape {
    pagination?: Record<string, unknown>;
    /** the child job over /parents/{id}/items */
    child?: Record<string, unknown>;
    /** a second child, over each tag of a parent (a list: several combinations per record) */
    tags?: boolean;
    /** grandchildren under the first child */
    notes?: boolean;
  }

  function parameters(shape: Shape, concurrency?: number) {
    const notes = { endpoint: 'notes/{key}', dataType: 'notes', dataField: 'items', placeholders: { key: 'key' } };
    const child = {
      endpoint: 'parents/{id}/items',
      dataType: 'items',
      dataField: 'items',
      placeholders: { id: 'id' },
      ...(concurrency ? { concurrency } : {}),
      ...shape.child,
      ...(shape.notes ? { children: [notes] } : {}),
    };
    const tags = {
      endpoint: 'parents/{pid}/tags/{tag}',
      dataType: 'tags',
      dataField: 'items',
      placeholders: { pid: 'id', tag: 'tags' },
      ...(concurrency ? { concurrency } : {}),
    };
    return {
      api: {
        baseUrl: `${server.url}/`,
        pagination: { method: 'pagenum', limit: 10, ...shape.pagination },
        retryConfig: { backoffBase: 0.01 },
      },
      config: {
        outputBucket: 'pc',
        jobs: [{ endpoint: 'parents', dataField: 'items', children: shape.tags ? [child, tags] : [child] }],
      },
    };
  }

  /** The info lines of a run and its child runs' start and end (debug) without their time: the story a user reads. */
  const story = (logs: string) =>
    logs
      .split('\n')
      .filter((line) => / (INFO|WARN) |DEBUG Job '[^']*'(: | finished: )/.test(line) && !/Retrying|retry/i.test(line))
      .map((line) => line.replace(/^\S+\s+/, '').replace(/requests took [\d.]+ s$/, 'requests took … s'));

  async function sequentialAndParallel(
    shape: Shape,
    concurrency = 8,
  ): Promise<{ sequential: ExtractionRun; parallel: ExtractionRun }> {
    const sequential = await runExtraction(parameters(shape));
    assert.equal(flight.max, 1, 'the sequential run sent one request at a time');
    const sequentialRequests = [...served].sort();
    reset();
    const parallel = await runExtraction(parameters(shape, concurrency));
    assert.ok(flight.max > 1, `requests overlapped (${flight.max} at once)`);
    for (const [name, counter] of peak)
      assert.ok(counter.max <= concurrency, `${name}: ${counter.max} at once, more than ${concurrency}`);
    assert.deepEqual([...parallel.files.keys()], [...sequential.files.keys()]);
    for (const [file, content] of sequential.files) assert.equal(parallel.files.get(file), content, `${file} differs`);
    assert.equal(stateFileText(parallel.result.state), stateFileText(sequential.result.state));
    assert.deepEqual([...served].sort(), sequentialRequests, 'the same set of requests');
    assert.deepEqual(story(parallel.logs), story(sequential.logs));
    assert.deepEqual(parallel.result.jobs, sequential.result.jobs);
    return { sequential, parallel };
  }

  it('children with several pages, repeated pages and grandchildren: identical output and requests', async () => {
    const { parallel } = await sequentialAndParallel({ notes: true });
    assert.match(parallel.logs, /matched the previous one/, 'a repeated page ended a child');
    assert.ok(parallel.files.get('pc.notes')!.split('\n').length > 50, 'grandchildren were written');
  });

  it('several placeholder combinations per record share their paginator, with forceStop leaving it mid-way', async () => {
    await sequentialAndParallel({ tags: true, pagination: { forceStop: { pages: 1 } } });
  });

  it('recursionFilter: only the records it admits get child runs', async () => {
    const { parallel } = await sequentialAndParallel({ child: { recursionFilter: 'kind==admin' }, notes: true });
    // admins are parents 1, 4, 7, …, 22; parent 13 has no items
    assert.equal(
      new Set(
        parallel.files
          .get('pc.items')!
          .split('\n')
          .slice(1, -1)
          .map((l) => l.split(',').at(-1)),
      ).size,
      7,
      'items of 7 admins',
    );
  });

  for (const [name, stop] of [
    ['limitStop.field', { limitStop: { field: 'total' } }],
    ['limitStop.count', { limitStop: { count: 12 } }],
    ['nextPageFlag', { nextPageFlag: { field: 'more', stopOn: false } }],
    ['forceStop.pages', { forceStop: { pages: 2 } }],
  ] as const) {
    it(`stop condition ${name}: identical output and requests`, async () => {
      await sequentialAndParallel({ pagination: stop, tags: true, notes: true });
    });
  }

  it('a child concurrency is inherited by grandchildren and each level stays within it', async () => {
    await sequentialAndParallel({ notes: true }, 3);
  });

  it('shares the adaptive limit with the parent: throttled (429) requests are retried, output identical', async () => {
    throttleAbove = 3;
    await sequentialAndParallel({ notes: true });
    assert.ok(throttled > 0, 'the server throttled some requests');
  });

  it("a failing child request fails the run with the sequential run's error, cancelling what was fetched ahead", async () => {
    failOn = '/parents/7/items';
    const errorOf = async (concurrency?: number) => {
      await assert.rejects(runExtraction(parameters({ notes: true }, concurrency)), (error: Error) => {
        assert.match(error.message, /404/);
        return true;
      });
      return (await runExtraction(parameters({ notes: true }, concurrency)).catch((error: Error) => error)) as Error;
    };
    const sequential = await errorOf();
    const parallel = await errorOf(8);
    assert.equal(parallel.message, sequential.message);
    // nothing keeps running after the failure: the server goes quiet
    await sleep(50);
    assert.equal(flight.now, 0);
  });
});
