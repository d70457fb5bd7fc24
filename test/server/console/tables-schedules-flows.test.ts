import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { runGex, startServe } from '../../support/cli.js';
import { consoleLogin, type ConsoleClient } from '../../support/console.js';
import { call, jobLogTail, untilFinished, type Json } from '../../support/queue.js';

const KEY = { GEX_MASTER_KEY: '6f'.repeat(32) };
const configsOf = (component: string) => `/v2/storage/branch/default/components/${component}/configs`;
const HOSTILE = '<img src=x onerror=alert(1)>';
const SCRIPT_CELL = '<script>alert(1)</script>';
const TABLE = 'in.c-shop.users';

/** The preview table's body rows (cells as the HTML has them). */
function previewRows(html: string): string[][] {
  const body = /<table class="list preview">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? '';
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...row[1].matchAll(/<td>([\s\S]*?)<\/td>/g)].map((cell) => cell[1]),
  );
}

/** The Tables, Schedules and Flows pages (issue 36 item 3) over plain HTTP on a real gex serve with a worker. */
describe('console: Tables, Schedules, Flows', function () {
  this.timeout(120_000);
  let dir: string;
  let api: FixtureServer;
  let served: { child: ChildProcess; url: string };
  let token: string;
  let reader: string;
  let stranger: string;
  let shop: string;
  let flowId: string;
  let flowRun: Json;
  let scheduleId: string;

  const schedule = async (): Promise<Json> => {
    const got = await call(served.url, token, 'GET', `/schedules/${scheduleId}`);
    assert.equal(got.status, 200, JSON.stringify(got.body));
    return got.body;
  };

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-console-pages-'));
    const store = path.join(dir, 'store.sqlite');
    const made = async (args: string[]) => {
      const r = await runGex(['tokens', 'create', ...args, '--store', store], KEY);
      assert.equal(r.code, 0, r.stderr);
      return r.stdout.trim();
    };
    token = await made(['--description', 'ci']);
    reader = await made(['--description', 'viewer', '--read-only']);
    stranger = await made(['--description', 'other', '--project', 'other']);
    api = await startFixtureServer({
      handler: () => ({
        body: {
          data: [
            { id: 1, name: 'Ann', note: SCRIPT_CELL },
            { id: 2, name: 'Bob', note: 'plain' },
            { id: 3, name: 'Bob', note: HOSTILE },
            { id: 4, name: 'Cid', note: 'x' },
          ],
        },
      }),
    });
    served = await startServe(['--store', store, '--workers', '1'], KEY);
    const configuration = {
      parameters: {
        api: { baseUrl: `${api.url}/v1/` },
        config: { outputBucket: 'shop', jobs: [{ endpoint: 'users', dataField: 'data' }] },
      },
    };
    const created = await call(served.url, token, 'POST', configsOf('ex-generic-v2'), { name: 'shop', configuration });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    shop = String(created.body.id);
    // a flow whose one task runs the extractor: its run loads the table
    const flow = await call(served.url, token, 'POST', configsOf('keboola.orchestrator'), {
      name: `flow ${HOSTILE}`,
      configuration: {
        phases: [
          { id: 1, name: 'Extract <script>', dependsOn: [] },
          { id: 2, name: 'Later', dependsOn: [1] },
        ],
        tasks: [
          {
            id: '10',
            name: 'get users',
            phase: '1',
            task: { componentId: 'ex-generic-v2', configId: shop, mode: 'run' },
          },
          {
            id: '11',
            name: 'skipped one',
            phase: '2',
            enabled: false,
            task: { componentId: 'ex-generic-v2', configId: shop, mode: 'run' },
          },
        ],
      },
    });
    assert.equal(flow.status, 201, JSON.stringify(flow.body));
    flowId = String(flow.body.id);
    const run = await call(served.url, token, 'POST', '/jobs', { component: 'keboola.orchestrator', config: flowId });
    assert.equal(run.status, 201, JSON.stringify(run.body));
    flowRun = await untilFinished(served.url, token, String(run.body.id), 60_000);
    assert.equal(flowRun.status, 'success', await jobLogTail(served.url, token, flowRun));
    // a schedule through the Scheduler API: a keboola.scheduler configuration, activated
    const scheduler = await call(served.url, token, 'POST', configsOf('keboola.scheduler'), {
      name: 'nightly',
      configuration: {
        schedule: { cronTab: '17 3 * * *', timezone: 'Europe/Prague', state: 'enabled' },
        target: { componentId: 'ex-generic-v2', configurationId: shop, mode: 'run' },
      },
    });
    assert.equal(scheduler.status, 201, JSON.stringify(scheduler.body));
    const activated = await call(served.url, token, 'POST', '/schedules', {
      configurationId: String(scheduler.body.id),
    });
    assert.equal(activated.status, 201, JSON.stringify(activated.body));
    scheduleId = String(activated.body.id);
  });
  after(async () => {
    served?.child.kill('SIGTERM');
    await api?.close();
    await rm(dir, { recursive: true, force: true });
  });

  describe('Tables', () => {
    let client: ConsoleClient;
    before(async () => {
      client = await consoleLogin(served.url, token);
    });

    it('lists buckets and their tables with rows, size and last import', async () => {
      const page = await client.get('/console/tables');
      assert.equal(page.status, 200);
      assert.match(page.html, /<h2 class="bucket">in\.c-shop /);
      const row = /<tr>\s*<td><a href="\/console\/tables\/in\.c-shop\.users">users<\/a><\/td>([\s\S]*?)<\/tr>/.exec(
        page.html,
      );
      assert.ok(row, 'the table links to its page');
      assert.match(row[1], /<td class="number">4<\/td>/, 'its rows');
      assert.match(row[1], /<td class="number">[\d.]+ (bytes|KiB|MiB)<\/td>/, 'its size');
      const detail = (await call(served.url, token, 'GET', `/v2/storage/tables/${TABLE}`)).body;
      assert.ok(row[1].includes(`datetime="${detail.lastImportDate}"`), 'its last import, as the Storage API says');
    });

    it("a table's page: its columns and rows through the preview, every cell escaped", async () => {
      const page = await client.get(`/console/tables/${TABLE}`);
      assert.equal(page.status, 200);
      assert.match(page.html, /<ul class="columns"><li>id<\/li><li>name<\/li><li>note<\/li><\/ul>/);
      const rows = previewRows(page.html);
      assert.deepEqual(
        rows.map((r) => r.slice(0, 2)),
        [
          ['1', 'Ann'],
          ['2', 'Bob'],
          ['3', 'Bob'],
          ['4', 'Cid'],
        ],
      );
      assert.equal(rows[0][2], '&lt;script&gt;alert(1)&lt;/script&gt;');
      assert.equal(rows[2][2], '&lt;img src=x onerror=alert(1)&gt;');
      assert.ok(!page.html.includes(SCRIPT_CELL) && !page.html.includes(HOSTILE), 'no raw markup from a cell');
    });

    it("the column filter narrows the rows (the preview's whereColumn/whereValues)", async () => {
      const page = await client.get(`/console/tables/${TABLE}?column=name&value=Bob`);
      assert.equal(page.status, 200);
      assert.deepEqual(
        previewRows(page.html).map((r) => r[0]),
        ['2', '3'],
      );
      assert.match(page.html, /<option selected>name<\/option>/);
      const none = await client.get(`/console/tables/${TABLE}?column=name&value=Zed`);
      assert.match(none.html, /No rows match this filter/);
      const unknown = await client.get(`/console/tables/${TABLE}?column=${encodeURIComponent(HOSTILE)}&value=1`);
      assert.equal(unknown.status, 200);
      assert.match(unknown.html, /The table has no column &lt;img/);
      assert.equal(previewRows(unknown.html).length, 4, 'an unknown column filters nothing');
    });

    it('a table that is not there: a 404 page', async () => {
      assert.equal((await client.get('/console/tables/in.c-shop.nope')).status, 404);
      assert.equal((await client.get('/console/tables/not-a-table-id')).status, 404);
    });
  });

  describe('Schedules', () => {
    it('lists a schedule with its target, cron, time zone, next run and state', async () => {
      const client = await consoleLogin(served.url, token);
      const page = await client.get('/console/schedules');
      assert.equal(page.status, 200);
      assert.ok(page.html.includes(`href="/console/configurations/ex-generic-v2/${shop}"`), 'its target links');
      assert.match(page.html, /<code>17 3 \* \* \*<\/code>/);
      assert.match(page.html, /<td>Europe\/Prague<\/td>/);
      const next = /<time datetime="([^"]+)">/.exec(page.html.split('<tbody>')[1])?.[1];
      assert.ok(next && Date.parse(next) > Date.now(), `a next run in the future: ${next}`);
      assert.match(page.html, /<span class="state enabled">enabled<\/span>/);
      assert.match(page.html, /none yet/, 'no job fired yet');
      assert.match(page.html, /<button type="submit" class="danger">Disable<\/button>/);
    });

    it('a POST without the CSRF token: 403 and the schedule stays enabled', async () => {
      const client = await consoleLogin(served.url, token);
      assert.equal((await client.post(`/console/schedules/${scheduleId}/disable`, {}, null)).status, 403);
      assert.equal((await schedule()).schedule.state, 'enabled');
    });

    it('read-only: no buttons, and its POST is refused', async () => {
      const client = await consoleLogin(served.url, reader);
      const page = await client.get('/console/schedules');
      assert.equal(page.status, 200);
      assert.match(page.html, /<code>17 3 \* \* \*<\/code>/, 'it still sees the schedule');
      assert.doesNotMatch(page.html, /Disable|Enable<\/button>/);
      assert.equal((await client.post(`/console/schedules/${scheduleId}/disable`)).status, 403);
      assert.equal((await schedule()).schedule.state, 'enabled');
    });

    it('Disable disables it (the Scheduler API says so), Enable enables it again', async () => {
      const client = await consoleLogin(served.url, token);
      const disabled = await client.post(`/console/schedules/${scheduleId}/disable`);
      assert.equal(disabled.status, 303);
      assert.equal(disabled.headers.get('location'), '/console/schedules');
      const wire = await schedule();
      assert.equal(wire.schedule.state, 'disabled');
      assert.equal(wire.id, scheduleId, 'the same schedule');
      const page = await client.get('/console/schedules');
      assert.match(page.html, /<span class="state disabled">disabled<\/span>/);
      assert.match(page.html, /<button type="submit">Enable<\/button>/);
      assert.equal((await client.post(`/console/schedules/${scheduleId}/enable`)).status, 303);
      assert.equal((await schedule()).schedule.state, 'enabled');
    });
    it("shows a fired schedule's last job with its status", async () => {
      const client = await consoleLogin(served.url, token);
      // every second (a 6-field cron): its ticks fire jobs of the extractor
      const scheduler = await call(served.url, token, 'POST', configsOf('keboola.scheduler'), {
        name: 'every second',
        configuration: {
          schedule: { cronTab: '* * * * * *', timezone: 'UTC', state: 'enabled' },
          target: { componentId: 'ex-generic-v2', configurationId: shop, mode: 'run' },
        },
      });
      const activated = await call(served.url, token, 'POST', '/schedules', {
        configurationId: String(scheduler.body.id),
      });
      assert.equal(activated.status, 201, JSON.stringify(activated.body));
      const id = String(activated.body.id);
      const rowOf = (html: string) =>
        [...html.matchAll(/<tr>\s*<td>(\d+) [\s\S]*?<\/tr>/g)].find((m) => m[1] === id)?.[0] ?? '';
      const until = async (what: string, holds: (row: string) => Promise<boolean> | boolean): Promise<string> => {
        const deadline = Date.now() + 30_000;
        for (;;) {
          const row = rowOf((await client.get('/console/schedules')).html);
          if (await holds(row)) return row;
          assert.ok(Date.now() < deadline, `${what} not within 30 s: ${row}`);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      };
      const lastJob = (row: string) => /<a href="\/console\/jobs\/(\d+)">/.exec(row)?.[1];
      await until('a fired job', (row) => lastJob(row) !== undefined);
      // disabled from the console: its executions end (one tick in flight may still land)
      assert.equal((await client.post(`/console/schedules/${id}/disable`)).status, 303);
      assert.equal((await call(served.url, token, 'GET', `/schedules/${id}`)).body.schedule.state, 'disabled');
      const row = await until('the newest execution, finished', async (row) => {
        const newest = (await call(served.url, token, 'GET', `/schedules/${id}`)).body.executions[0];
        return String(newest.jobId) === lastJob(row) && /<span class="status success">success<\/span>/.test(row);
      });
      const job = (await call(served.url, token, 'GET', `/jobs/${lastJob(row)}`)).body;
      assert.equal(job.status, 'success', 'the status the Queue API has');
      assert.match(row, /<span class="state disabled">disabled<\/span>/);
    });
  });

  describe('Flows', () => {
    it('lists a flow with its phases in order, their tasks (enabled or not) and its run', async () => {
      const client = await consoleLogin(served.url, token);
      const page = await client.get('/console/flows');
      assert.equal(page.status, 200);
      assert.ok(page.html.includes('flow &lt;img src=x onerror=alert(1)&gt;'), 'the name escaped');
      assert.ok(!page.html.includes(HOSTILE) && !page.html.includes('Extract <script>'));
      assert.ok(page.html.includes(`href="/console/configurations/keboola.orchestrator/${flowId}"`));
      const phases = [...page.html.matchAll(/<li class="phase">\s*<b>([^<]*)<\/b>/g)].map((m) => m[1]);
      assert.deepEqual(phases, ['Extract &lt;script&gt;', 'Later']);
      assert.match(page.html, /<small>after Extract &lt;script&gt;<\/small>/);
      const tasks = [...page.html.matchAll(/<li class="task([^"]*)">([^:]*):[\s\S]*?<span class="state (\w+)">/g)].map(
        (m) => [m[2], m[3], m[1]],
      );
      assert.deepEqual(tasks, [
        ['get users', 'enabled', ''],
        ['skipped one', 'disabled', ' off'],
      ]);
      assert.ok(page.html.includes(`href="/console/configurations/ex-generic-v2/${shop}">ex-generic-v2 ${shop}</a>`));
      const runs = /<table class="list runs">[\s\S]*?<\/table>/.exec(page.html)?.[0] ?? '';
      assert.ok(runs.includes(`<a href="/console/jobs/${flowRun.id}">${flowRun.id}</a>`), 'its run links to the job');
      assert.match(runs, /<span class="status success">success<\/span>/);
      assert.equal([...runs.matchAll(/<tr><td>/g)].length, 1, 'only the root job, not its phases and tasks');
    });

    it("a flow run's page lists its tree: each phase and task with its status; a task's page names its parent", async () => {
      const client = await consoleLogin(served.url, token);
      const tree = (await call(served.url, token, 'GET', `/search/jobs?parentRunId=${flowRun.runId}&limit=100`))
        .body as Json[];
      assert.ok(tree.length >= 2, `${tree.length} jobs below the root`);
      const page = await client.get(`/console/jobs/${flowRun.id}`);
      assert.equal(page.status, 200);
      const children = /<h2>Children<\/h2>[\s\S]*?<\/table>/.exec(page.html)?.[0] ?? '';
      const listed = [...children.matchAll(/<tr><td><a href="\/console\/jobs\/(\d+)">[\s\S]*?<td>(\w+)<\/td>/g)].map(
        (m) => [Number(m[1]), m[2]],
      );
      assert.deepEqual(
        listed,
        tree
          .map((j) => Number(j.id))
          .sort((a, b) => a - b)
          .map((id) => [id, tree.find((j) => Number(j.id) === id)!.type]),
        'every phase and task, in id order',
      );
      const task = tree.find((j) => j.type === 'standard')!;
      assert.match(
        children,
        new RegExp(
          `/console/jobs/${task.id}">${task.id}</a></td><td>standard</td><td>[^<]*</td><td><span class="status ${task.status}">`,
        ),
      );
      const taskPage = await client.get(`/console/jobs/${task.id}`);
      assert.match(taskPage.html, /<h2>Parent<\/h2>\s*<p><a href="\/console\/jobs\/\d+">Job \d+<\/a>/);
      assert.ok(!taskPage.html.includes('<h2>Children</h2>'), 'a task has no children');
    });
  });

  it("another project's token sees none of it; its table page is a 404", async () => {
    const client = await consoleLogin(served.url, stranger);
    const tables = await client.get('/console/tables');
    assert.equal(tables.status, 200);
    assert.ok(!tables.html.includes('in.c-shop'));
    assert.match(tables.html, /no buckets yet/);
    const table = await client.get(`/console/tables/${TABLE}`);
    assert.equal(table.status, 404);
    assert.ok(!table.html.includes('Ann'));
    const schedules = await client.get('/console/schedules');
    assert.match(schedules.html, /No schedules yet/);
    assert.ok(!schedules.html.includes('17 3'));
    assert.equal((await client.post(`/console/schedules/${scheduleId}/disable`)).status, 404);
    assert.equal((await schedule()).schedule.state, 'enabled', 'nothing changed');
    const flows = await client.get('/console/flows');
    assert.match(flows.html, /No flows yet/);
    assert.ok(!flows.html.includes('Extract'));
  });
});
