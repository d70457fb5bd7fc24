import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { repoRoot, runGex, startServe } from '../support/cli.js';
import { call, untilFinished, type Json } from '../support/queue.js';

const KEY = { GEX_MASTER_KEY: '6a'.repeat(32) };
const CONFIGS = '/v2/storage/branch/default/components/ex-generic-v2/configs';
const SCHEDULER_CONFIGS = '/v2/storage/branch/default/components/keboola.scheduler/configs';

/**
 * Issue 33 item 1, performed: ids that look like options (`--log-file=…`, `--store=…`, `--`, `-h`,
 * `--help`), ids an option parser would split or trim (`a,b`, ` padded `), as configuration and
 * row ids created through the Storage API, run as queue jobs (POST /jobs and a schedule's tick) by
 * a real `gex serve`: each job runs exactly its rows, writes no file the id names and touches no
 * other store; its log carries each message once and names no temporary folder or internal field.
 */
describe('ids that look like options, run as queue jobs', function () {
  this.timeout(180_000);
  let dir: string;
  let store: string;
  let other: string;
  let logFile: string;
  let api: FixtureServer;
  let served: { child: ChildProcess; url: string; output: () => string };
  let token: string;
  /** the tags the API was called with, in order */
  const calls: string[] = [];

  const optionLike = () => [`--log-file=${logFile}`, `--store=${other}`, '--', '-h', '--help'];
  const jobs = new Map<string, Json>();

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-argv-attack-'));
    store = path.join(dir, 'store.sqlite');
    other = path.join(dir, 'other.sqlite');
    logFile = path.join(dir, 'attack.log');
    api = await startFixtureServer({
      handler: (r) => {
        const tag = new URL(r.url, 'http://x').searchParams.get('tag') ?? '?';
        calls.push(tag);
        return Promise.resolve({ body: { data: [{ id: 1, tag }] } });
      },
    });
    const made = await runGex(['tokens', 'create', '--description', 'ci', '--store', store], KEY);
    assert.equal(made.code, 0, made.stderr);
    token = made.stdout.trim();
    served = await startServe(['--store', store, '--workers', '1'], KEY);
  });

  after(async () => {
    served?.child.kill('SIGTERM');
    if (served && served.child.exitCode === null) await new Promise((resolve) => served.child.once('exit', resolve));
    await api?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const job = (tag: string) => ({
    endpoint: 'users',
    dataField: 'data',
    dataType: `t${tag.replace(/\W/g, '')}`,
    params: { tag },
  });

  /** A job of `config` (rows `rowIds`), run to its end. */
  async function run(config: string, rowIds: string[] = []): Promise<Json> {
    const created = await call(served.url, token, 'POST', '/jobs', {
      component: 'ex-generic-v2',
      config,
      configRowIds: rowIds,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const done = await untilFinished(served.url, token, String(created.body.id), 60_000);
    jobs.set(String(done.id), done);
    return done;
  }

  /** The API calls a finished job made (each job calls once per row it ran). */
  async function callsOf(work: () => Promise<Json>): Promise<{ job: Json; tags: string[] }> {
    const before = calls.length;
    const finished = await work();
    return { job: finished, tags: calls.slice(before) };
  }

  it('configuration ids: created as Keboola allows any id, each job runs its own configuration', async () => {
    for (const [i, id] of optionLike().entries()) {
      const created = await call(served.url, token, 'POST', CONFIGS, {
        name: `attack ${i}`,
        configurationId: id,
        configuration: {
          parameters: {
            api: { baseUrl: `${api.url}/v1/` },
            config: { outputBucket: `atk${i}`, jobs: [job(`cfg${i}`)] },
          },
        },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.id, id, 'the id is kept as given');
      const { job: done, tags } = await callsOf(() => run(id));
      assert.equal(done.status, 'success', `${id}: ${JSON.stringify(done.result)}`);
      assert.equal(done.config, id);
      assert.deepEqual(tags, [`cfg${i}`], `${id} ran its own configuration, once`);
      assert.deepEqual(
        done.result.output.tables.map((t: Json) => t.id),
        [`in.c-atk${i}.tcfg${i}`],
      );
    }
  });

  const rowIds = () => [...optionLike(), 'a,b', ' padded ', 'plain'];

  it('row ids: each job runs exactly the rows it names, whatever they hold', async () => {
    const created = await call(served.url, token, 'POST', CONFIGS, {
      name: 'rows',
      configurationId: 'rows',
      configuration: { parameters: { api: { baseUrl: `${api.url}/v1/` } } },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    for (const [i, rowId] of rowIds().entries()) {
      const row = await call(served.url, token, 'POST', `${CONFIGS}/rows/rows`, {
        rowId,
        name: `row ${i}`,
        configuration: { parameters: { config: { outputBucket: 'rows', jobs: [job(`row${i}`)] } } },
      });
      assert.equal(row.status, 201, JSON.stringify(row.body));
      assert.equal(row.body.id, rowId);
    }
    const ids = rowIds();
    for (const [i, rowId] of ids.entries()) {
      const { job: done, tags } = await callsOf(() => run('rows', [rowId]));
      assert.equal(done.status, 'success', `${JSON.stringify(rowId)}: ${JSON.stringify(done.result)}`);
      assert.deepEqual(tags, [`row${i}`], `${JSON.stringify(rowId)} ran that row alone`);
    }
    // several at once, in a list an option parser would have mangled
    const picked = [ids[0], ids[2], ids[5], ids[6]];
    const { job: done, tags } = await callsOf(() => run('rows', picked));
    assert.equal(done.status, 'success', JSON.stringify(done.result));
    assert.deepEqual([...tags].sort(), ['row0', 'row2', 'row5', 'row6']);
    assert.deepEqual(done.configRowIds, picked);
    // and every row, none named
    const all = await callsOf(() => run('rows'));
    assert.deepEqual([...all.tags].sort(), ids.map((_, i) => `row${i}`).sort());
  });

  it("a schedule's tick runs the rows its target names, the same way", async () => {
    const target = [`--help`, `--store=${other}`, 'a,b'];
    const schedule = await call(served.url, token, 'POST', SCHEDULER_CONFIGS, {
      name: 'every second',
      configuration: {
        schedule: { cronTab: '* * * * * *', timezone: 'UTC', state: 'enabled' },
        target: { componentId: 'ex-generic-v2', configurationId: 'rows', configurationRowIds: target, mode: 'run' },
      },
    });
    assert.equal(schedule.status, 201, JSON.stringify(schedule.body));
    const activated = await call(served.url, token, 'POST', '/schedules', {
      configurationId: String(schedule.body.id),
    });
    assert.equal(activated.status, 201, JSON.stringify(activated.body));
    let fired: Json | undefined;
    for (const end = Date.now() + 30_000; !fired && Date.now() < end; await sleep(200)) {
      fired = (await call(served.url, token, 'GET', `/schedules/${activated.body.id}`)).body.executions?.[0];
    }
    assert.ok(fired, 'the schedule fired');
    assert.equal((await call(served.url, token, 'DELETE', `/schedules/${activated.body.id}`)).status, 204);
    const done = await untilFinished(served.url, token, String(fired.jobId), 60_000);
    jobs.set(String(done.id), done);
    assert.equal(done.status, 'success', JSON.stringify(done.result));
    assert.deepEqual(done.configRowIds, target);
  });

  it("gex's own command line: an id given as --option=ID is a value; gex's hints write it so", async () => {
    const cli = (args: string[]) => runGex([...args, '--store', store], KEY);
    const data = path.join(dir, 'data');
    for (const id of optionLike()) {
      const r = await cli(['run', `--config-id=${id}`, '--data-dir', data]);
      assert.equal(r.code, 0, `${id}: ${r.stdout}${r.stderr}`);
      assert.ok(r.stdout.includes(`Configuration ${id} "attack `), `${id} is the configuration run, not an option`);
    }
    const added = await cli([
      'rows',
      'add',
      'rows',
      '--row-id=-d',
      '--disabled',
      '--set',
      'parameters.config.jobs=[{"endpoint":"users"}]',
    ]);
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stderr, /Note: the id -d starts with "-": on a command line give it as --row-id=-d/);
    const ran = await cli(['run', '--config-id', 'rows', `--row-id=--log-file=${logFile}`, '--data-dir', data]);
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /Finished row 1 of 1: "?--log-file=/);
    const all = await cli(['run', '--config-id', 'rows', '--data-dir', data]);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /disabled \(run it anyway with --row-id=-d\)/);
    await rm(data, { recursive: true, force: true });
  });

  it('no job wrote a file an id named, touched another store, or left its folder', async () => {
    assert.ok(jobs.size >= 15, `${jobs.size} jobs ran`);
    assert.equal(existsSync(logFile), false, 'no log appended to a file an id named');
    assert.equal(existsSync(other), false, 'no run pointed at another store');
    assert.deepEqual(
      (await readdir(dir)).filter((name) => !name.startsWith('store.sqlite')),
      [],
      'nothing else in the folder',
    );
    assert.deepEqual(
      (await readdir(repoRoot)).filter((name) => name.startsWith('-')),
      [],
      'nothing an id names in the working folder',
    );
    const folders = (await readdir(os.tmpdir())).filter((name) =>
      [...jobs.keys()].some((id) => name.startsWith(`gex-job-${id}-${served.child.pid}-`)),
    );
    assert.deepEqual(folders, [], 'every job folder removed');
  });

  it("each job's log: its messages once, no temporary folder, no internal field", async () => {
    for (const id of jobs.keys()) {
      const events = (await call(served.url, token, 'GET', `/v2/storage/events?runId=${id}&limit=1000`)).body as Json[];
      assert.ok(events.length > 3, `job ${id} logged`);
      for (const { message, type } of events) {
        assert.ok(['info', 'warning', 'error'].includes(type));
        assert.doesNotMatch(message, /^\d\d:\d\d:\d\d\.\d{3} /, 'no time before the message: the event has its own');
        assert.doesNotMatch(message, /\b(INFO|WARN|ERROR)\b {1,2}/, 'no level in the message');
        assert.doesNotMatch(message, /gex-job-|Tables are in|in folder rows\//, 'no temporary folder');
        assert.doesNotMatch(message, /\b(destinationFrom|dataDir|scheduleId|configId|rowId)=/, 'no internal field');
      }
    }
  });
});
