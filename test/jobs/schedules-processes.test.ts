import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { runGex, startServe } from '../support/cli.js';
import { call, jobLogTail, startWorker, untilFinished, type Json, type Worker } from '../support/queue.js';
import { inSchema, POSTGRES_VARIABLE, postgresBackend, withPostgresClient } from '../support/store.js';

const KEY = { GEX_MASTER_KEY: '68'.repeat(32) };
const CONFIGS = '/v2/storage/branch/default/components/ex-generic-v2/configs';
const SCHEDULER_CONFIGS = '/v2/storage/branch/default/components/keboola.scheduler/configs';

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** A local API that counts the requests of each tag (one per scheduled job). */
async function countingApi(): Promise<{ api: FixtureServer; count: (tag: string) => number }> {
  const counts = new Map<string, number>();
  const api = await startFixtureServer({
    handler: (r) => {
      const tag = new URL(r.url, 'http://x').searchParams.get('tag') ?? '?';
      counts.set(tag, (counts.get(tag) ?? 0) + 1);
      return Promise.resolve({ body: { data: [{ id: 1, tag }] } });
    },
  });
  return { api, count: (tag) => counts.get(tag) ?? 0 };
}

/** A Generic Extractor configuration calling the API with `tag`, and a schedule of it, activated. */
async function scheduled(server: string, token: string, apiUrl: string, tag: string, cronTab: string): Promise<Json> {
  const configuration = {
    parameters: {
      api: { baseUrl: `${apiUrl}/v1/` },
      config: { outputBucket: `s-${tag}`, jobs: [{ endpoint: 'users', dataField: 'data', params: { tag } }] },
    },
  };
  const target = await call(server, token, 'POST', CONFIGS, { name: tag, configuration });
  assert.equal(target.status, 201, JSON.stringify(target.body));
  const schedule = await call(server, token, 'POST', SCHEDULER_CONFIGS, {
    name: `every few seconds: ${tag}`,
    configuration: {
      schedule: { cronTab, timezone: 'UTC', state: 'enabled' },
      target: { componentId: 'ex-generic-v2', configurationId: String(target.body.id), mode: 'run' },
    },
  });
  assert.equal(schedule.status, 201, JSON.stringify(schedule.body));
  const activated = await call(server, token, 'POST', '/schedules', { configurationId: String(schedule.body.id) });
  assert.equal(activated.status, 201, JSON.stringify(activated.body));
  return activated.body;
}

/** Waits until `check` holds, polling every 100 ms. */
async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/**
 * A schedule's executions, oldest first, once every job has finished; `stopped`: jobs a stopped
 * server ended ("the worker stopped") may be among them, every other one succeeded.
 */
async function finishedExecutions(server: string, token: string, id: string, stopped = false): Promise<Json[]> {
  const schedule = (await call(server, token, 'GET', `/schedules/${id}`)).body;
  const executions = [...(schedule.executions as Json[])].reverse();
  for (const e of executions) {
    const job = await untilFinished(server, token, e.jobId, 60_000);
    if (stopped && job.status === 'error') assert.match(String(job.result.message), /worker stopped/);
    else if (job.status !== 'success')
      assert.fail(
        `job ${job.id} ended ${job.status}: ${JSON.stringify(job.result)}\n${await jobLogTail(server, token, job)}`,
      );
  }
  return executions;
}

describe('schedules fired by real servers and workers', function () {
  this.timeout(180_000);

  it('SQLite: gex serve fires each tick once; a restart between two ticks fires none twice and the next one on time', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-schedules-'));
    const store = path.join(dir, 'store.sqlite');
    const { api, count } = await countingApi();
    let served: Awaited<ReturnType<typeof startServe>> | undefined;
    try {
      const made = await runGex(['tokens', 'create', '--description', 'ci', '--store', store], KEY);
      assert.equal(made.code, 0, made.stderr);
      const token = made.stdout.trim();
      served = await startServe(['--store', store, '--workers', '2'], KEY);
      const schedule = await scheduled(served.url, token, api.url, 'sqlite', '*/2 * * * * *');
      await until('two scheduled runs', () => count('sqlite') >= 2);
      served.child.kill('SIGTERM');
      await exited(served.child);
      const before = count('sqlite');
      // at least two ticks fall while nothing runs (a 2 s cron): the restarted server fires the latest
      // (within its grace, 5 s) and reports the ones before it missed, however fast it starts
      await sleep(4500);
      served = await startServe(['--store', store, '--workers', '2'], KEY);
      await until('a run after the restart', () => count('sqlite') >= before + 1);
      // disabled and enabled again by another process (gex schedules on the same file): the server notices
      const disabled = await runGex(['schedules', 'disable', String(schedule.id), '--store', store], KEY);
      assert.equal(disabled.code, 0, disabled.stderr);
      // a tick fires only while the schedule's revision is the one its ticker read (checked in the
      // firing transaction): none fires once the disable is committed, whenever the server notices it
      // (executions: newest first)
      const latestTick = async () =>
        String(
          ((await call(served!.url, token, 'GET', `/schedules/${schedule.id}`)).body.executions as Json[])[0]
            ?.executionTime,
        );
      const whileDisabled = await latestTick();
      await sleep(2500); // longer than a tick's interval
      assert.equal(await latestTick(), whileDisabled, 'disabled in another process: no more ticks fired');
      const enabled = await runGex(['schedules', 'enable', String(schedule.id), '--store', store], KEY);
      assert.equal(enabled.code, 0, enabled.stderr);
      await until('a tick after enabling', async () => (await latestTick()) !== whileDisabled);
      assert.match(served.output(), /ticks? .*missed \(no worker ran, or the schedule was disabled\)/);
      const executions = await finishedExecutions(served.url, token, schedule.id, true);
      const ticks = executions.map((e) => Date.parse(e.executionTime as string));
      assert.equal(new Set(ticks).size, ticks.length, 'no tick twice');
      assert.ok(
        ticks.every((t) => t % 2000 === 0),
        'ticks on the cron',
      );
      assert.ok(ticks.length >= 3);
      assert.equal((await call(served.url, token, 'DELETE', `/schedules/${schedule.id}`)).status, 204);
      const jobs = (await call(served.url, token, 'GET', '/search/jobs?limit=500')).body as Json[];
      const ended = await Promise.all(jobs.map((job) => untilFinished(served!.url, token, String(job.id), 60_000)));
      // a job the stopping server ended may not have reached the API; none reached it twice
      const succeeded = ended.filter((j) => j.status === 'success').length;
      assert.ok(
        count('sqlite') >= succeeded && count('sqlite') <= jobs.length,
        `${count('sqlite')} requests, ${succeeded} of ${jobs.length} jobs succeeded`,
      );
      assert.ok(jobs.length >= executions.length);
      const runs = count('sqlite');
      await sleep(2500);
      assert.equal(count('sqlite'), runs, 'a deleted schedule fires no more');
    } finally {
      served?.child.kill('SIGTERM');
      if (served) await exited(served.child);
      await api.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  describe('PostgreSQL: three gex workers and a server on one database', () => {
    const url = process.env[POSTGRES_VARIABLE]?.trim();
    if (!postgresBackend() || !url) return;
    const schema = `gex_test_sched_${process.pid}_${randomBytes(3).toString('hex')}`;
    const store = inSchema(url, schema);
    const workers: Worker[] = [];
    let served: Awaited<ReturnType<typeof startServe>> | undefined;
    let api: Awaited<ReturnType<typeof countingApi>>;

    before(async () => {
      await withPostgresClient(url, (c) => c.query(`CREATE SCHEMA ${schema}`));
      api = await countingApi();
    });
    after(async () => {
      const all = [served, ...workers].filter((p) => p !== undefined);
      for (const p of all) p.child.kill('SIGTERM');
      await Promise.race([Promise.all(all.map((p) => exited(p.child))), sleep(20_000)]);
      for (const p of all) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
      await api?.api.close();
      await withPostgresClient(url, (c) =>
        c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; DROP SCHEMA IF EXISTS ${schema}_pgboss CASCADE`),
      );
    });

    it('fires each tick exactly once, counted at the API, with no tick skipped while they run', async () => {
      const made = await runGex(['tokens', 'create', '--description', 'ci', '--store', store], KEY);
      assert.equal(made.code, 0, made.stderr);
      const token = made.stdout.trim();
      served = await startServe(['--store', store, '--workers', '0'], KEY);
      workers.push(...(await Promise.all([1, 2, 3].map(() => startWorker(store, KEY, ['--concurrency', '2'])))));
      const schedule = await scheduled(served.url, token, api.api.url, 'pg', '*/2 * * * * *');
      await until('four scheduled runs', () => api.count('pg') >= 4, 60_000);
      // disabled by a new version of the configuration, activated: nothing fires from then on
      const config = (await call(served.url, token, 'GET', `${SCHEDULER_CONFIGS}/${schedule.configurationId}`)).body;
      const off = { ...config.configuration, schedule: { ...config.configuration.schedule, state: 'disabled' } };
      const changed = await call(served.url, token, 'PUT', `${SCHEDULER_CONFIGS}/${schedule.configurationId}`, {
        configuration: off,
      });
      assert.equal(changed.status, 200, JSON.stringify(changed.body));
      const again = await call(served.url, token, 'POST', '/schedules', { configurationId: schedule.configurationId });
      assert.equal(again.status, 201);
      assert.equal(again.body.id, schedule.id, 'activating the configuration again keeps its schedule');
      assert.equal(again.body.schedule.state, 'disabled');
      const executions = await finishedExecutions(served.url, token, schedule.id);
      const ticks = executions.map((e) => Date.parse(e.executionTime as string));
      assert.equal(new Set(ticks).size, ticks.length, 'no tick twice');
      for (let i = 1; i < ticks.length; i++) assert.equal(ticks[i] - ticks[i - 1], 2000, 'no tick skipped');
      assert.equal(new Set(executions.map((e) => e.jobId)).size, executions.length);
      assert.equal(api.count('pg'), executions.length, 'one request per tick, whichever worker ran it');
      await sleep(2500);
      assert.equal(api.count('pg'), executions.length, 'a disabled schedule fires no more');
    });
  });
});
