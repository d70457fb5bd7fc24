import assert from 'node:assert/strict';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProgressLine } from '../../src/common/progress-line.js';
import { DataFolder } from '../../src/extractor/data-folder.js';
import { extract } from '../../src/extractor/extractor.js';
import { stateFileText } from '../../src/extractor/extractor-state.js';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { runGex } from '../support/cli.js';
import { captureLogger, makeDataDir, runExtraction, type ExtractionRun } from '../support/extraction.js';
import { InFlight } from '../support/in-flight.js';

/**
 * totalPath / totalPagesPath against a real server with latency (parallel requests really
 * overlap): exactly the pages up to the last one are requested, the tables are those of a
 * sequential run, caps stay absolute, and the summary says what stopped each job.
 */
describe('total from the first page (totalPath, totalPagesPath) against a real server', () => {
  let server: FixtureServer;
  const flight = new InFlight();
  /** what page 1 reports as its total (meta.total); later pages report none */
  let reported: unknown = 100;
  const RECORDS = 100;

  before(async () => {
    server = await startFixtureServer({
      handler: (r) =>
        flight.around(async () => {
          await sleep(10);
          const url = new URL(r.url, 'http://x');
          if (url.pathname !== '/items') return undefined;
          const limit = Number(url.searchParams.get('limit') ?? 10);
          const offset = url.searchParams.has('offset')
            ? Number(url.searchParams.get('offset'))
            : (Number(url.searchParams.get('page') ?? 1) - 1) * limit;
          const items = [];
          for (let i = offset; i < Math.min(RECORDS, offset + limit); i++)
            items.push({ id: i, name: `n${i}`, tags: i % 3 ? ['a'] : [] });
          // only the first page carries the totals, as many APIs do
          return {
            body:
              offset === 0
                ? {
                    meta: {
                      total: reported,
                      pages: typeof reported === 'number' ? Math.ceil(reported / limit) : reported,
                    },
                    items,
                  }
                : { items },
          };
        }),
    });
  });
  after(() => server.close());
  beforeEach(async () => {
    await flight.quiet();
    server.requests.length = 0;
    reported = RECORDS;
  });

  const parameters = (pagination: Record<string, unknown>) => ({
    api: { baseUrl: `${server.url}/`, pagination },
    config: { outputBucket: 'p', jobs: [{ endpoint: 'items', dataField: 'items' }] },
  });
  const requested = () => server.requests.map((r) => r.url).sort();
  const pageUrls = (count: number) => Array.from({ length: count }, (_, i) => `/items?page=${i + 1}&limit=10`).sort();
  const offsetUrls = (count: number) =>
    Array.from({ length: count }, (_, i) => `/items?limit=10&offset=${i * 10}`).sort();

  function sameOutput(a: ExtractionRun, b: ExtractionRun): void {
    assert.deepEqual([...b.files.keys()], [...a.files.keys()]);
    for (const [file, content] of a.files) assert.equal(b.files.get(file), content, `${file} differs`);
    assert.equal(stateFileText(b.result.state), stateFileText(a.result.state));
  }

  it('pagenum + totalPath, 4 in flight: exactly pages 1–10 (no empty page 11), the table of a sequential run', async () => {
    const sequential = await runExtraction(parameters({ method: 'pagenum', limit: 10 }));
    assert.deepEqual(requested(), [...pageUrls(11)], 'without a total the empty page 11 ends the job');
    assert.equal(sequential.result.jobs[0].stoppedBy, 'underflow');
    server.requests.length = 0;
    const parallel = await runExtraction(
      parameters({ method: 'pagenum', limit: 10, totalPath: 'meta.total', concurrency: 4 }),
    );
    assert.deepEqual(requested(), pageUrls(10), 'each page once, none past the last');
    assert.ok(flight.max > 1 && flight.max <= 4, `requests overlapped, at most 4 (${flight.max})`);
    sameOutput(sequential, parallel);
    assert.deepEqual(parallel.result.jobs, [
      {
        job: 'items',
        pages: 10,
        records: 100,
        stopReason: 'total: page 10 was the last (100 records at meta.total, 10 per page)',
        stoppedBy: 'total',
      },
    ]);
    assert.match(parallel.logs, /Job 'items': GET items, pagenum \(page=1\.\., limit=10, records at meta\.total\)/);
    assert.match(parallel.logs, /Job 'items' finished: 10 pages, 100 records; stopped: total: page 10 was the last/);
  });

  it('offset + totalPagesPath, 4 in flight: exactly offsets 0–90', async () => {
    const sequential = await runExtraction(parameters({ method: 'offset', limit: 10 }));
    server.requests.length = 0;
    const parallel = await runExtraction(
      parameters({ method: 'offset', limit: 10, totalPagesPath: 'meta.pages', concurrency: 4 }),
    );
    assert.deepEqual(requested(), offsetUrls(10));
    sameOutput(sequential, parallel);
    assert.equal(parallel.result.jobs[0].stoppedBy, 'total');
  });

  it('a total that is no multiple of the limit (95): page 10 is its last', async () => {
    reported = 95;
    const run = await runExtraction(
      parameters({ method: 'pagenum', limit: 10, totalPath: 'meta.total', concurrency: 4 }),
    );
    // the server really has 100 records: page 10 is full, the total ends the job there all the same
    assert.deepEqual(requested(), pageUrls(10));
    assert.equal(run.result.jobs[0].stoppedBy, 'total');
  });

  it('a total larger than the data: the natural end (the empty page 11) comes first', async () => {
    const sequential = await runExtraction(parameters({ method: 'pagenum', limit: 10 }));
    reported = 200;
    server.requests.length = 0;
    const run = await runExtraction(
      parameters({ method: 'pagenum', limit: 10, totalPath: 'meta.total', concurrency: 4 }),
    );
    sameOutput(sequential, run);
    assert.equal(run.result.jobs[0].stoppedBy, 'underflow');
    assert.equal(run.result.jobs[0].pages, 11);
    // pages 12–14 may have been fetched ahead (up to 3 past the end), never more
    assert.ok(server.requests.length >= 11 && server.requests.length <= 14, `${server.requests.length} requests`);
  });

  it('a total smaller than the data ends the job at it: the API is believed', async () => {
    reported = 30;
    const run = await runExtraction(
      parameters({ method: 'offset', limit: 10, totalPath: 'meta.total', concurrency: 4 }),
    );
    assert.deepEqual(requested(), offsetUrls(3));
    assert.equal(run.files.get('p.items')!.split('\n').length - 2, 30);
  });

  it('forceStop.pages stays absolute with a known total and 4 in flight', async () => {
    const run = await runExtraction(
      parameters({ method: 'pagenum', limit: 10, totalPath: 'meta.total', concurrency: 4, forceStop: { pages: 3 } }),
    );
    assert.deepEqual(requested(), pageUrls(3));
    assert.equal(run.result.jobs[0].stoppedBy, 'forceStop.pages');
    assert.match(
      run.logs,
      /Job 'items' finished: 3 pages, 30 records; stopped by cap forceStop\.pages \(forceStop: 3 pages reached\)/,
    );
  });

  for (const [name, value] of [
    ['negative', -5],
    ['a string', 'lots'],
    ['an object', { n: 1 }],
    ['1e300', 1e300],
    ['missing', undefined],
  ] as const) {
    it(`a hostile total (${name}): one warning, then the run of a configuration without the option`, async () => {
      reported = value;
      const plain = await runExtraction(parameters({ method: 'pagenum', limit: 10 }));
      server.requests.length = 0;
      flight.max = 0;
      const run = await runExtraction(
        parameters({ method: 'pagenum', limit: 10, totalPath: 'meta.total', concurrency: 4 }),
      );
      sameOutput(plain, run);
      assert.equal(run.result.jobs[0].stoppedBy, 'underflow');
      assert.equal(run.logs.match(/WARN .*parameters\.api\.pagination\.totalPath meta\.total/g)?.length, 1, run.logs);
      // bounded prefetch: the 11 pages of a sequential run and at most 3 fetched ahead past them
      assert.ok(server.requests.length <= 11 + 3, `${server.requests.length} requests`);
      assert.ok(flight.max <= 4);
    });
  }

  it('the configuration: a known key (no unknown-key warning); a wrong type or both keys fail before any request', async () => {
    const run = await runExtraction(parameters({ method: 'pagenum', limit: 10, totalPagesPath: 'meta.pages' }));
    assert.doesNotMatch(run.logs, /Unknown key/);
    server.requests.length = 0;
    await assert.rejects(
      runExtraction(parameters({ method: 'pagenum', limit: 10, totalPath: 5 })),
      /Invalid configuration at parameters\.api\.pagination\.totalPath: got 5\. Expected pagenum, offset: the path of the number of records in the first response, e\.g\. "meta\.total"/,
    );
    await assert.rejects(
      runExtraction(parameters({ method: 'offset', limit: 10, totalPath: 'a', totalPagesPath: 'b' })),
      /Invalid configuration at parameters\.api\.pagination: has both 'totalPath' and 'totalPagesPath'/,
    );
    await assert.rejects(
      runExtraction(parameters({ method: 'cursor', idKey: 'id', param: 'since', totalPath: 'a' })),
      /totalPath: works with pagenum and offset only/,
    );
    assert.deepEqual(server.requests, []);
  });

  it('shows an ETA on the progress line once the first page told the total', async () => {
    const drawn = async (pagination: Record<string, unknown>) => {
      let text = '';
      const stream = Object.assign(
        new Writable({
          write(chunk, _enc, done) {
            text += String(chunk);
            done();
          },
        }),
        { isTTY: true, columns: 200 },
      );
      const dataDir = await makeDataDir({ parameters: parameters(pagination) });
      try {
        const input = await new DataFolder(dataDir).read();
        await extract(input, {
          dataDir,
          logger: captureLogger().logger,
          progressLine: new ProgressLine(stream, { minIntervalMs: 0 }),
        });
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
      return text;
    };
    assert.match(
      await drawn({ method: 'pagenum', limit: 10, totalPath: 'meta.total' }),
      /items: 1 page, 10 records, [\d,]+ records\/s, ETA \d+:\d\d/,
    );
    assert.doesNotMatch(await drawn({ method: 'pagenum', limit: 10 }), /ETA/);
  });

  it('gex run --summary: each job with its pages, records and stoppedBy (a cap and a natural end)', async () => {
    const dir = await makeDataDir({
      parameters: {
        api: {
          baseUrl: `${server.url}/`,
          pagination: {
            method: 'pagenum',
            limit: 10,
            totalPath: 'meta.total',
            concurrency: 4,
            forceStop: { pages: 2 },
          },
        },
        config: {
          outputBucket: 'p',
          jobs: [
            { endpoint: 'items', dataField: 'items' },
            { endpoint: 'items', dataType: 'first', dataField: 'items', params: { limit: 200 } },
          ],
        },
      },
    });
    try {
      const summaryFile = path.join(dir, 'summary.json');
      const result = await runGex(['run', '--data-dir', dir, '--summary', summaryFile]);
      assert.equal(result.code, 0, result.stderr);
      const summary = JSON.parse(await readFile(summaryFile, 'utf8'));
      assert.deepEqual(summary.rows[0].jobs, [
        { job: 'items', pages: 2, records: 20, stoppedBy: 'forceStop.pages' },
        { job: 'first', pages: 1, records: 100, stoppedBy: 'underflow' },
      ]);
      assert.match(result.stdout, /Job 'items' finished: 2 pages, 20 records; stopped by cap forceStop\.pages/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
