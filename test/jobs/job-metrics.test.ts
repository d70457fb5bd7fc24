import assert from 'node:assert/strict';
import { countLines, jobView } from '../../src/cli/jobs/job-view.js';
import {
  countsOfRun,
  MAX_LISTED_ROWS,
  MAX_LISTED_TABLES,
  MAX_TEXT,
  readJobRunCounts,
  type JobRunCounts,
} from '../../src/jobs/job-metrics.js';
import type { QueueJob } from '../../src/jobs/job-record.js';
import { MAX_OUTPUT_TABLES, resultOfRun, runOutcome } from '../../src/jobs/job-result.js';
import type { RunSummaryFile } from '../../src/jobs/job-run-contract.js';
import { jobToWire } from '../../src/jobs/job-wire.js';
import { decodeJson, stringifyExact, toPlain } from '../../src/json/index.js';
import type { RunSummary } from '../../src/runner/run-summary.js';

type Json = Record<string, any>;

/** A run of two rows (one skipped) as `gex run` writes its summary: row b read row a's table. */
function summary(): RunSummary {
  return {
    componentId: 'ex-generic-v2',
    configId: 'shop',
    configVersion: 3,
    status: 'success',
    message: 'Component processing finished.',
    rowsRun: 2,
    rowsSkipped: 1,
    stateSaved: true,
    durationMs: 1500,
    rows: [
      {
        id: 'a',
        name: 'Users',
        folder: 'rows/a',
        status: 'success',
        requests: 3,
        records: 40,
        durationMs: 700,
        jobs: [],
        stateSaved: true,
        tables: [
          { file: 'rows/a/out/tables/shop.users', rows: 40, bytes: 1200, loaded: true, tableId: 'in.c-shop.users' },
          { file: 'rows/a/out/tables/shop.users_tags', rows: 7, bytes: 90, loaded: false },
        ],
      },
      {
        id: 'b',
        name: '',
        folder: 'rows/b',
        status: 'success',
        requests: 1,
        records: 2,
        durationMs: 300,
        jobs: [],
        stateSaved: true,
        inputTables: [{ source: 'in.c-shop.users', file: 'rows/b/in/tables/users.csv', rows: 40, bytes: 1200 }],
        tables: [
          { file: 'rows/b/out/tables/shop.report', rows: 2, bytes: 30, loaded: true, tableId: 'in.c-shop.report' },
        ],
      },
      {
        id: 'c',
        name: 'Off',
        folder: 'rows/c',
        status: 'skipped',
        reason: 'disabled',
        requests: 0,
        records: 0,
        durationMs: 0,
        jobs: [],
        stateSaved: false,
        tables: [],
      },
    ],
  };
}

function queueJob(result: QueueJob['result']): QueueJob {
  return {
    id: 12,
    type: 'standard',
    orchestrationTaskId: null,
    configData: null,
    projectId: 1,
    projectName: 'default',
    componentId: 'ex-generic-v2',
    configId: 'shop',
    branchId: 'default',
    status: result ? 'success' : 'processing',
    desiredStatus: 'processing',
    mode: 'run',
    runId: '12',
    parentRunId: '',
    tokenId: 1,
    tokenDescription: 'ci',
    configRowIds: [],
    tag: null,
    orchestrationJobId: null,
    created: '2030-01-01T00:00:00.000Z',
    started: '2030-01-01T00:00:01.000Z',
    ended: result ? '2030-01-01T00:00:03.000Z' : null,
    durationSeconds: result ? 2 : null,
    result,
    worker: null,
    attempt: 1,
    retryLimit: 0,
    timeoutSeconds: null,
  };
}

/** The job object as a client parses it (plain JSON). */
const wireOf = (job: QueueJob): Json => JSON.parse(stringifyExact(jobToWire(job, 'http://q'))) as Json;

describe('what a job moved: the run summary → the result and metrics', () => {
  it('counts rows run and skipped, requests, records, duration, and each row with its tables (rows and bytes)', () => {
    const counts = countsOfRun(summary())!;
    assert.deepEqual(counts, {
      rowsRun: 2,
      rowsSkipped: 1,
      requests: 4,
      records: 42,
      durationMs: 1500,
      outputTables: 3,
      outputRows: 49,
      outputBytes: 1320,
      inputTables: 1,
      inputRows: 40,
      inputBytes: 1200,
      rows: [
        {
          id: 'a',
          name: 'Users',
          status: 'success',
          requests: 3,
          records: 40,
          durationMs: 700,
          tables: [
            { tableId: 'in.c-shop.users', file: 'rows/a/out/tables/shop.users', rows: 40, bytes: 1200 },
            { tableId: null, file: 'rows/a/out/tables/shop.users_tags', rows: 7, bytes: 90 },
          ],
          inputTables: [],
        },
        {
          id: 'b',
          name: '',
          status: 'success',
          requests: 1,
          records: 2,
          durationMs: 300,
          tables: [{ tableId: 'in.c-shop.report', file: 'rows/b/out/tables/shop.report', rows: 2, bytes: 30 }],
          inputTables: [{ tableId: 'in.c-shop.users', file: 'rows/b/in/tables/users.csv', rows: 40, bytes: 1200 }],
        },
        {
          id: 'c',
          name: 'Off',
          status: 'skipped',
          requests: 0,
          records: 0,
          durationMs: 0,
          tables: [],
          inputTables: [],
        },
      ],
      rowsNotListed: 0,
      tablesNotListed: 0,
    } satisfies JobRunCounts);
    assert.equal(countsOfRun(undefined), undefined, 'no summary: no counts');
  });

  it("the job object: Keboola's metrics (storage bytes, backend nulls) and gex's counts; the result stays Keboola's", () => {
    const { result } = resultOfRun(summary(), 0);
    const wire = wireOf(queueJob(result));
    assert.deepEqual(wire.metrics.storage, { inputTablesBytesSum: 1200, outputTablesBytesSum: 1320 });
    assert.deepEqual(wire.metrics.backend, { size: null, containerSize: null, context: null });
    assert.deepEqual(Object.keys(wire.metrics), ['storage', 'backend', 'gex']);
    assert.deepEqual(wire.metrics.gex, JSON.parse(JSON.stringify(countsOfRun(summary() as RunSummaryFile))));
    assert.deepEqual(Object.keys(wire.result), ['message', 'configVersion', 'output'], 'no counts in the result');
    assert.deepEqual(
      wire.result.output.tables.map((t: Json) => t.id),
      ['in.c-shop.users', 'in.c-shop.report'],
    );
    // a job that has not ended, or one whose result holds no counts (an older gex's), keeps PHP's empty array
    assert.deepEqual(wireOf(queueJob(null)).metrics, []);
    assert.deepEqual(wireOf(queueJob({ message: 'done', configVersion: '1', output: { tables: [] } })).metrics, []);
  });

  it("a failed run's result has the counts of what ran; a killed or timed-out run's too, when it wrote a summary", () => {
    const failed = {
      ...summary(),
      status: 'error' as const,
      message: 'boom',
      error: { kind: 'user', message: 'boom' },
    };
    const { status, result } = resultOfRun(failed as RunSummaryFile, 1);
    assert.equal(status, 'error');
    assert.equal(result.error?.type, 'user');
    assert.equal(result.counts?.requests, 4);
    const end = { killed: false, timedOut: true, timeoutSeconds: 5, workerStopped: false, exitCode: 143 };
    const timedOut = runOutcome('processing', { ...end, summary: failed as RunSummaryFile });
    assert.equal(timedOut.status, 'error');
    assert.match(timedOut.result.message, /timed out after 5 seconds/);
    assert.equal(timedOut.result.counts?.records, 42);
    const killed = runOutcome('terminating', { ...end, timedOut: false, summary: undefined });
    assert.equal(killed.status, 'terminated');
    assert.equal(killed.result.counts, undefined, 'no summary, no counts');
  });

  it('a hostile summary: strings, negatives, fractions, Infinity, unsafe integers and wrong types count as 0', () => {
    // JSON.parse reads 1e999 as Infinity: what a summary file can hold, not only what TypeScript allows
    const file = JSON.parse(`{
      "rowsRun": "2", "rowsSkipped": -1, "durationMs": 1e999,
      "rows": [
        {"id": 7, "name": {"x": 1}, "status": "pwned", "requests": 1.5, "records": 9007199254740993, "durationMs": null,
         "tables": [{"file": 3, "rows": -4, "bytes": "10", "loaded": true, "tableId": ["x"]}, "not a table", null],
         "inputTables": {"length": 2}},
        "not a row", null, [1, 2],
        {"id": "ok", "requests": 9007199254740991, "records": 2, "tables": [{"rows": 9007199254740991, "bytes": 1}, {"rows": 9007199254740991, "bytes": 1}]},
        {"id": "ok2", "requests": 9007199254740991}
      ]
    }`) as RunSummaryFile;
    const counts = countsOfRun(file)!;
    assert.equal(counts.rowsRun, 0);
    assert.equal(counts.rowsSkipped, 0);
    assert.equal(counts.durationMs, 0);
    assert.deepEqual(counts.rows[0], {
      id: null,
      name: '',
      status: 'unknown',
      requests: 0,
      records: 0,
      durationMs: 0,
      tables: [
        { tableId: null, file: '', rows: 0, bytes: 0 },
        { tableId: null, file: '', rows: 0, bytes: 0 },
        { tableId: null, file: '', rows: 0, bytes: 0 },
      ],
      inputTables: [],
    });
    assert.equal(counts.rows.length, 6, 'an entry that is no row is listed as an empty one, never thrown on');
    // sums stop at the largest safe integer: never imprecise, never Infinity
    assert.equal(counts.requests, Number.MAX_SAFE_INTEGER);
    assert.equal(counts.outputRows, Number.MAX_SAFE_INTEGER);
    assert.equal(counts.outputTables, 5);
    assert.equal(counts.outputBytes, 2);
    for (const value of Object.values(counts))
      if (typeof value === 'number') assert.ok(Number.isSafeInteger(value) && value >= 0, String(value));
    // a summary that is no object: none
    for (const bad of [null, [], 'x', 1]) assert.equal(countsOfRun(bad as unknown as RunSummaryFile), undefined);
    // a long id or file is cut; the result's output lists no table id that long
    const long = 'x'.repeat(100_000);
    const cut = countsOfRun({
      rows: [{ id: long, tables: [{ file: long, loaded: true, tableId: long, rows: 1, bytes: 1 }] }],
    })!;
    assert.equal(cut.rows[0].id, `${'x'.repeat(MAX_TEXT)}…`);
    assert.equal(cut.rows[0].tables[0].file.length, MAX_TEXT + 1);
    assert.deepEqual(
      resultOfRun({ status: 'success', rows: [{ tables: [{ loaded: true, tableId: long }] }] }, 0).result.output.tables,
      [],
    );
  });

  it('huge lists: every entry counted, at most 100 rows and 100 tables listed, the rest said; the result stays small', () => {
    const rows = Array.from({ length: 50_000 }, (_, i) => ({
      id: `r${i}`,
      status: 'success',
      requests: 1,
      records: 2,
      tables: [
        { file: `f${i}`, rows: 3, bytes: 4, loaded: true, tableId: `in.c-b.t${i}` },
        { file: `g${i}`, rows: 3, bytes: 4, loaded: false },
      ],
      inputTables: [{ source: 'in.c-b.t0', file: `i${i}`, rows: 5, bytes: 6 }],
    }));
    const file = { status: 'success', rowsRun: rows.length, rows } as RunSummaryFile;
    const started = performance.now();
    const { result } = resultOfRun(file, 0);
    assert.ok(performance.now() - started < 2000, 'one pass');
    const counts = result.counts!;
    assert.equal(counts.requests, 50_000);
    assert.equal(counts.records, 100_000);
    assert.equal(counts.outputTables, 100_000);
    assert.equal(counts.outputRows, 300_000);
    assert.equal(counts.inputBytes, 300_000);
    assert.equal(counts.rows.length, MAX_LISTED_ROWS);
    assert.equal(counts.rowsNotListed, 50_000 - MAX_LISTED_ROWS);
    const listedTables = counts.rows.reduce((n, r) => n + r.tables.length + r.inputTables.length, 0);
    assert.equal(listedTables, MAX_LISTED_TABLES);
    assert.equal(counts.tablesNotListed, 150_000 - MAX_LISTED_TABLES);
    assert.deepEqual(counts.rows[40].tables, [], 'past the first 100 tables, rows are listed without theirs');
    assert.equal(result.output.tables.length, MAX_OUTPUT_TABLES);
    assert.equal(result.output.tablesNotListed, 50_000 - MAX_OUTPUT_TABLES);
    const bytes = stringifyExact(jobToWire(queueJob(result), 'http://q')).length;
    assert.ok(bytes < 200_000, `the job object is ${bytes} bytes`);
  });

  it('reads metrics.gex back from a server defensively: its lists bounded again, its values checked', () => {
    const rows = Array.from({ length: 300 }, (_, i) => ({
      id: i % 2 ? `r${i}` : null,
      status: i === 0 ? 'evil' : 'success',
      requests: -1,
      tables: [{ tableId: `t${i}`, file: 'f', rows: '1', bytes: 2 }],
    }));
    const read = readJobRunCounts({ rowsRun: 'x', requests: 5, rowsNotListed: 10, tablesNotListed: 1, rows })!;
    assert.equal(read.rowsRun, 0);
    assert.equal(read.requests, 5);
    assert.equal(read.rows.length, MAX_LISTED_ROWS);
    assert.equal(read.rowsNotListed, 10 + 200);
    assert.equal(read.tablesNotListed, 1 + 200);
    assert.equal(read.rows[0].status, 'unknown');
    assert.deepEqual(read.rows[1].tables, [{ tableId: 't1', file: 'f', rows: 0, bytes: 2 }]);
    for (const bad of [null, [], 'x', 3]) assert.equal(readJobRunCounts(bad), undefined);
  });

  it('gex jobs show: the counts as lines, values escaped; a Keboola job: its storage bytes; none: nothing', () => {
    const { result } = resultOfRun(summary(), 0);
    const view = jobView(jobToWire(queueJob(result), 'http://q'))!;
    assert.deepEqual(countLines(view), [
      'Moved: 2 rows run (1 skipped), 4 requests, 42 records in 1.5 s',
      'Tables: wrote 3 tables (49 rows, 1,320 bytes), read 1 table (40 rows, 1,200 bytes)',
      'Row a: success, 3 requests, 40 records in 0.7 s',
      '  in.c-shop.users: 40 rows, 1,200 bytes',
      '  rows/a/out/tables/shop.users_tags: 7 rows, 90 bytes',
      'Row b: success, 1 request, 2 records in 0.3 s',
      '  read in.c-shop.users: 40 rows, 1,200 bytes',
      '  in.c-shop.report: 2 rows, 30 bytes',
      'Row c: skipped',
    ]);
    // a configuration without rows: its one unit is the run, no row lines
    const rowless = resultOfRun(
      {
        status: 'success',
        rowsRun: 1,
        durationMs: 250,
        rows: [
          {
            id: null,
            status: 'success',
            requests: 2,
            records: 5,
            durationMs: 200,
            tables: [{ file: 'out/tables/x', rows: 5, bytes: 60 }],
          },
        ],
      },
      0,
    ).result;
    assert.deepEqual(countLines(jobView(jobToWire(queueJob(rowless), ''))!), [
      'Moved: 2 requests, 5 records in 0.3 s',
      'Tables: wrote 1 table (5 rows, 60 bytes)',
      '  out/tables/x: 5 rows, 60 bytes',
    ]);
    const hostile = decodeJson(
      JSON.stringify({
        id: '7',
        status: 'success',
        metrics: {
          gex: {
            rowsRun: 1,
            rows: [{ id: 'a\u001b[2Jb', status: 'success', tables: [{ tableId: 'x\ny', rows: 1, bytes: 1 }] }],
            rowsNotListed: 3,
          },
        },
      }),
    );
    const lines = countLines(jobView(hostile)!);
    assert.ok(
      lines.every((l) => !/[\u0000-\u001f]/.test(l)),
      JSON.stringify(lines),
    );
    assert.match(lines.at(-1)!, /^Not listed: 3 rows, 0 tables/);
    const keboola = decodeJson(
      JSON.stringify({
        id: '8',
        status: 'success',
        metrics: { storage: { inputTablesBytesSum: 0, outputTablesBytesSum: 2048 }, backend: { size: 'small' } },
      }),
    );
    assert.deepEqual(countLines(jobView(keboola)!), ['Storage: input tables 0 bytes, output tables 2,048 bytes']);
    assert.deepEqual(countLines(jobView(decodeJson('{"id":"9","status":"success","metrics":[]}'))!), []);
    assert.deepEqual(toPlain(jobView(keboola)!.wire.get('metrics')!), {
      storage: { inputTablesBytesSum: 0, outputTablesBytesSum: 2048 },
      backend: { size: 'small' },
    });
  });
});
