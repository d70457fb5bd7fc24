import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { repoRoot, runGex, startServe } from '../support/cli.js';
import { call, untilFinished, type Json } from '../support/queue.js';

const KEY = { GEX_MASTER_KEY: '5a'.repeat(32) };
const PHP_CLIENT = path.resolve(repoRoot, '..', 'shared', 'clients', 'job-queue-php');

/** The CSVs the run writes and reads, as Generic Extractor and Keboola write them. */
const USERS_CSV = '"id","name"\n"1","Ann"\n"2","Bob"\n';
const REPORT_CSV = '"ok"\n"1"\n';

/**
 * What a job moved, end to end: a queue job of a real `gex serve --workers` runs a three-row
 * configuration (one row disabled, one reading the other's table by input mapping) against a
 * local API; the finished job's `metrics` say what the run did, `gex jobs show` prints it in both
 * modes, and Keboola's PHP client reads the job.
 */
describe('what a job moved: a queue job of a real gex run reports its counts', function () {
  this.timeout(120_000);
  let dir: string;
  let store: string;
  let api: FixtureServer;
  let served: Awaited<ReturnType<typeof startServe>>;
  let token: string;
  let job: Json;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-job-metrics-'));
    store = path.join(dir, 'store.sqlite');
    api = await startFixtureServer({
      handler: async (r) => {
        // every request takes a while: each row's duration has a floor to check
        await sleep(100);
        if (r.url.startsWith('/v1/users'))
          return {
            body: {
              data: [
                { id: 1, name: 'Ann' },
                { id: 2, name: 'Bob' },
              ],
            },
          };
        return { body: { data: [{ ok: 1 }] } };
      },
    });
    const jobs = (endpoint: string) => ({ parameters: { config: { jobs: [{ endpoint, dataField: 'data' }] } } });
    const document = {
      name: 'Shop',
      configurationId: 'shop',
      configuration: { parameters: { api: { baseUrl: `${api.url}/v1/` }, config: { outputBucket: 'shop' } } },
      rows: [
        { rowId: 'a-users', configuration: jobs('users') },
        { rowId: 'b-off', isDisabled: true, configuration: jobs('users') },
        {
          rowId: 'c-report',
          configuration: {
            ...jobs('report'),
            storage: { input: { tables: [{ source: 'in.c-shop.users', destination: 'users.csv' }] } },
          },
        },
      ],
    };
    const file = path.join(dir, 'shop.json');
    await writeFile(file, JSON.stringify(document));
    const imported = await runGex(['configs', 'import', file, '--store', store], KEY);
    assert.equal(imported.code, 0, imported.stderr);
    const made = await runGex(['tokens', 'create', '--description', 'ci', '--store', store], KEY);
    assert.equal(made.code, 0, made.stderr);
    token = made.stdout.trim();
    served = await startServe(['--store', store, '--workers', '1'], KEY);
    const created = await call(served.url, token, 'POST', '/jobs', { component: 'ex-generic-v2', config: 'shop' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(created.body.metrics, [], 'a new job has moved nothing: PHP’s empty array');
    job = await untilFinished(served.url, token, created.body.id);
  });
  after(async () => {
    served?.child.kill('SIGTERM');
    await api?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("metrics: Keboola's storage bytes and backend, gex's counts of rows, requests, records and tables", () => {
    assert.equal(job.status, 'success', JSON.stringify(job));
    const m = job.metrics as Json;
    assert.deepEqual(m.storage, {
      inputTablesBytesSum: USERS_CSV.length,
      outputTablesBytesSum: USERS_CSV.length + REPORT_CSV.length,
    });
    assert.deepEqual(m.backend, { size: null, containerSize: null, context: null });
    const g = m.gex as Json;
    assert.equal(g.requests, api.requests.length, 'every request the API answered');
    assert.equal(g.requests, 2);
    assert.deepEqual(
      [g.rowsRun, g.rowsSkipped, g.records, g.outputTables, g.outputRows, g.inputTables, g.inputRows],
      [2, 1, 3, 2, 3, 1, 2],
    );
    assert.deepEqual([g.outputBytes, g.inputBytes], [m.storage.outputTablesBytesSum, m.storage.inputTablesBytesSum]);
    assert.deepEqual([g.rowsNotListed, g.tablesNotListed], [0, 0]);
    const rows = g.rows as Json[];
    assert.deepEqual(
      rows.map((r) => [r.id, r.status, r.requests, r.records]),
      [
        ['a-users', 'success', 1, 2],
        ['b-off', 'skipped', 0, 0],
        ['c-report', 'success', 1, 1],
      ],
    );
    assert.deepEqual(rows[0].tables, [
      { tableId: 'in.c-shop.users', file: 'rows/a-users/out/tables/shop.users', rows: 2, bytes: USERS_CSV.length },
    ]);
    assert.deepEqual(rows[2].inputTables, [
      { tableId: 'in.c-shop.users', file: 'rows/c-report/in/tables/users.csv', rows: 2, bytes: USERS_CSV.length },
    ]);
    assert.deepEqual(rows[2].tables, [
      { tableId: 'in.c-shop.report', file: 'rows/c-report/out/tables/shop.report', rows: 1, bytes: REPORT_CSV.length },
    ]);
    for (const row of [rows[0], rows[2]]) assert.ok(row.durationMs >= 100, `row ${row.id}: ${row.durationMs} ms`);
    assert.ok(g.durationMs >= rows[0].durationMs + rows[2].durationMs, 'the run took at least its rows');
    assert.ok(g.durationMs <= (job.durationSeconds + 1) * 1000, 'and no longer than the job');
    // the result is Keboola's: the tables loaded, no counts
    assert.deepEqual(Object.keys(job.result).sort(), ['configVersion', 'message', 'output']);
    assert.deepEqual(
      job.result.output.tables.map((t: Json) => t.id),
      ['in.c-shop.users', 'in.c-shop.report'],
    );
  });

  it('the search answers with the same metrics', async () => {
    const listed = (await call(served.url, token, 'GET', `/search/jobs?id=${job.id}`)).body as unknown as Json[];
    assert.deepEqual(listed[0].metrics, job.metrics);
  });

  it('gex jobs show prints the counts, the same in the embedded mode and against the server', async () => {
    const local = await runGex(['jobs', 'show', String(job.id), '--store', store], KEY);
    assert.equal(local.code, 0, local.stderr);
    const over = await runGex(['jobs', 'show', String(job.id)], {
      GEX_STORE: '',
      GEX_MASTER_KEY: '',
      KBC_URL: served.url,
      KBC_TOKEN: token,
    });
    assert.equal(over.code, 0, over.stderr);
    assert.equal(over.stdout, local.stdout);
    const lines = local.stdout.trimEnd().split('\n').slice(1);
    const s = String.raw`\d+\.\d s`;
    const expected = [
      '  Component processing finished.',
      `  Moved: 2 rows run \\(1 skipped\\), 2 requests, 3 records in ${s}`,
      `  Tables: wrote 2 tables \\(3 rows, ${USERS_CSV.length + REPORT_CSV.length} bytes\\), read 1 table \\(2 rows, ${USERS_CSV.length} bytes\\)`,
      `  Row a-users: success, 1 request, 2 records in ${s}`,
      `    in\\.c-shop\\.users: 2 rows, ${USERS_CSV.length} bytes`,
      '  Row b-off: skipped',
      `  Row c-report: success, 1 request, 1 record in ${s}`,
      `    read in\\.c-shop\\.users: 2 rows, ${USERS_CSV.length} bytes`,
      `    in\\.c-shop\\.report: 1 row, ${REPORT_CSV.length} bytes`,
    ];
    assert.equal(lines.length, expected.length, local.stdout);
    lines.forEach((line, i) => assert.match(line, new RegExp(`^${expected[i]}$`)));
    const json = await runGex(['jobs', 'show', String(job.id), '--json', '--store', store], KEY);
    assert.deepEqual(JSON.parse(json.stdout).metrics, job.metrics, '--json: the job object as the API serves it');
  });

  it("Keboola's PHP client reads the finished job with its metrics", async function () {
    if (!existsSync(path.join(PHP_CLIENT, 'autoload.php'))) {
      console.warn(`\n  !!! SKIPPED: Keboola's PHP Queue client is not at ${PHP_CLIENT}\n`);
      this.skip();
    }
    const script = path.join(dir, 'client.php');
    await writeFile(
      script,
      `<?php
require ${JSON.stringify(path.join(PHP_CLIENT, 'autoload.php'))};
[, $url, $token, $id] = $argv;
$job = (new Keboola\\JobQueueClient\\Client($url . '/', $token))->getJob($id);
echo json_encode([$job->status, $job->metrics['storage']['outputTablesBytesSum'], $job->metrics['gex']['requests']]);
`,
    );
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile('php', [script, served.url, token, String(job.id)], { timeout: 60_000 }, (error, out, err) =>
        error ? reject(new Error(`${error.message}\n${err}\n${out}`)) : resolve(out),
      ),
    );
    assert.deepEqual(JSON.parse(stdout), ['success', USERS_CSV.length + REPORT_CSV.length, 2]);
  });
});
