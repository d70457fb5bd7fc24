import assert from 'node:assert/strict';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { runExtraction } from '../../support/extraction.js';

/** The log lines of a run at `level` (INFO, WARN, DEBUG), their level and clock cut off. */
function linesAt(logs: string, level: string): string[] {
  const prefix = ` ${level.padEnd(5)} `;
  return logs
    .split('\n')
    .filter((line) => line.slice(12).startsWith(prefix))
    .map((line) => line.slice(12 + prefix.length));
}

describe('job log lines: child runs and empty pages', () => {
  let server: FixtureServer;
  /** path (without query) → response body */
  const bodies = new Map<string, unknown>();

  before(async () => {
    server = await startFixtureServer({
      handler: (request) => {
        const [route, query] = request.url.split('?');
        const page = /(?:^|&)page=(\d+)/.exec(query ?? '')?.[1];
        return { body: bodies.get(page ? `${route}#${page}` : route) ?? {} };
      },
    });
  });
  after(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
    bodies.clear();
  });

  it('logs child runs at debug and one info line per child job with its totals', async () => {
    bodies.set('/users', { users: [{ id: 1 }, { id: 2 }, { id: 3 }] });
    for (const id of [1, 2, 3])
      bodies.set(`/users/${id}/comments`, { comments: id === 3 ? [] : [{ c: `${id}a` }, { c: `${id}b` }] });
    const run = await runExtraction({
      api: { baseUrl: `${server.url}/` },
      config: {
        jobs: [
          {
            endpoint: 'users',
            dataField: 'users',
            children: [
              {
                endpoint: 'users/{id}/comments',
                dataType: 'comments',
                dataField: 'comments',
                placeholders: { id: 'id' },
              },
            ],
          },
        ],
      },
    });
    assert.equal(server.requests.length, 4);
    const info = linesAt(run.logs, 'INFO');
    assert.deepEqual(
      info
        .filter((line) => line.includes('comments') && !line.startsWith('Wrote'))
        .map((line) => line.replace(/took [\d.]+ s$/, 'took T s')),
      [
        "Child job 'comments (users/{id}/comments)' finished: ran for 3 parent records, 3 requests, 4 records; " +
          'its requests took T s',
      ],
    );
    assert.equal(
      info.filter((line) => line.startsWith("Job 'users'")).length,
      2,
      'the top-level job keeps its info lines',
    );
    const debug = linesAt(run.logs, 'DEBUG');
    assert.equal(
      debug.filter((line) => /^Job 'comments \(users\/\d\/comments\)' finished/.test(line)).length,
      3,
      run.logs,
    );
    // an empty answer of one child run is the API saying "none": not a warning
    assert.deepEqual(linesAt(run.logs, 'WARN'), []);
    assert.ok(debug.includes("Job 'comments (users/3/comments)': dataField 'comments' contains no data!"), run.logs);
  });

  it('json: the child job line carries its totals as fields', async () => {
    const { mkdtemp, rm, mkdir, writeFile } = await import('node:fs/promises');
    const { Writable } = await import('node:stream');
    const { createLogger } = await import('../../../src/common/logger.js');
    const { DataFolder } = await import('../../../src/extractor/data-folder.js');
    const { extract } = await import('../../../src/extractor/extractor.js');
    bodies.set('/users', [{ id: 1 }, { id: 2 }]);
    bodies.set('/users/1/orders', [{ o: 1 }]);
    bodies.set('/users/2/orders', [{ o: 2 }, { o: 3 }]);
    const dataDir = await mkdtemp('/tmp/gex-test-');
    let text = '';
    const sink = new Writable({
      write(chunk, _e, done) {
        text += String(chunk);
        done();
      },
    });
    try {
      await mkdir(`${dataDir}/in`);
      const jobs = [
        {
          endpoint: 'users',
          children: [{ endpoint: 'users/{id}/orders', dataType: 'orders', placeholders: { id: 'id' } }],
        },
      ];
      await writeFile(
        `${dataDir}/config.json`,
        JSON.stringify({ parameters: { api: { baseUrl: `${server.url}/` }, config: { jobs } } }),
      );
      const logger = createLogger({ format: 'json', stdout: sink, stderr: sink });
      await extract(await new DataFolder(dataDir).read(), { dataDir, logger });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
    const line = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((record) => String(record.msg).startsWith('Child job'));
    assert.ok(line, text);
    assert.deepEqual(
      { ...line, time: undefined, durationMs: typeof line.durationMs, msg: undefined },
      {
        level: 'info',
        time: undefined,
        job: 'orders',
        endpoint: 'users/{id}/orders',
        parentRecords: 2,
        runs: 2,
        requests: 2,
        records: 3,
        durationMs: 'number',
        msg: undefined,
      },
    );
  });

  it('an empty last page of a paginated job is a debug line, not a warning', async () => {
    bodies.set('/items#1', { items: [{ id: 1 }, { id: 2 }] });
    bodies.set('/items#2', { items: [] });
    const run = await runExtraction({
      api: { baseUrl: `${server.url}/`, pagination: { method: 'pagenum', limit: 2 } },
      config: { jobs: [{ endpoint: 'items', dataField: 'items' }] },
    });
    assert.equal(server.requests.length, 2);
    assert.deepEqual(linesAt(run.logs, 'WARN'), []);
    assert.ok(linesAt(run.logs, 'DEBUG').includes("Job 'items': dataField 'items' contains no data!"), run.logs);
  });

  for (const [what, body] of [
    ['an empty list at the path (an incremental run with nothing new)', { items: [], next: null }],
    ['an empty answer', {}],
    ['nothing but empty values', { items: null, total: 0 }],
  ] as const) {
    it(`a first page with ${what} is a debug line`, async () => {
      bodies.set('/items', body);
      const run = await runExtraction({
        api: { baseUrl: `${server.url}/` },
        config: { jobs: [{ endpoint: 'items', dataField: 'items' }] },
      });
      assert.deepEqual(linesAt(run.logs, 'WARN'), []);
      assert.ok(linesAt(run.logs, 'DEBUG').includes("Job 'items': dataField 'items' contains no data!"), run.logs);
    });
  }

  it("a first page with data elsewhere but none at dataField keeps GE's warning (a wrong path)", async () => {
    bodies.set('/items', { data: [{ id: 1 }], total: 1 });
    const run = await runExtraction({
      api: { baseUrl: `${server.url}/` },
      config: { jobs: [{ endpoint: 'items', dataField: 'items' }] },
    });
    assert.deepEqual(linesAt(run.logs, 'WARN'), ["Job 'items': dataField 'items' contains no data!"]);
  });
});
