import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { runGex, startServe } from '../support/cli.js';
import { call, childrenOf, startWorker, untilFinished, untilJob, type Json, type Worker } from '../support/queue.js';
import { inSchema, POSTGRES_VARIABLE, postgresBackend, withPostgresClient } from '../support/store.js';

const KEY = { GEX_MASTER_KEY: '67'.repeat(32) };
const CONFIGS = '/v2/storage/branch/default/components/ex-generic-v2/configs';

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Scale-out on one PostgreSQL database: two `gex serve` that only accept jobs and three
 * `gex worker` processes that run them, all real processes; a local API records when each
 * configuration's requests arrive and are answered.
 */
describe('queue jobs on PostgreSQL: gex worker processes on one database (pg-boss dispatch)', function () {
  this.timeout(180_000);
  const url = process.env[POSTGRES_VARIABLE]?.trim();
  if (!postgresBackend() || !url) return;
  const schema = `gex_test_workers_${process.pid}_${randomBytes(3).toString('hex')}`;
  const store = inSchema(url, schema);
  let api: FixtureServer;
  const calls = new Map<string, Array<[number, number]>>();
  let token: string;
  const configs: Record<string, string> = {};
  let retrying: { child: ChildProcess; url: string; output: () => string };
  let plain: { child: ChildProcess; url: string; output: () => string };
  const workers: Worker[] = [];
  const create = (on: string, config: string) =>
    call(on, token, 'POST', '/jobs', { component: 'ex-generic-v2', config }).then((r) => {
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body;
    });
  /** the worker whose `gex run` runs a job now */
  const runnerOf = async (): Promise<Worker[]> => {
    const found: Worker[] = [];
    for (const w of workers) if (w.child.exitCode === null && (await childrenOf(w.child.pid!)).length) found.push(w);
    return found;
  };
  /** The worker whose gex run runs the one job processing: a job is `processing` a moment before its process starts. */
  const untilRunner = async (): Promise<Worker> => {
    for (let i = 0; i < 100; i++) {
      const [found] = await runnerOf();
      if (found) return found;
      await sleep(100);
    }
    throw new Error('no worker started a gex run for the processing job within 10 s');
  };

  before(async () => {
    await withPostgresClient(url, (c) => c.query(`CREATE SCHEMA ${schema}`));
    api = await startFixtureServer({
      handler: async (r) => {
        const tag = new URL(r.url, 'http://x').searchParams.get('tag') ?? '?';
        const arrived = Date.now();
        // a flow's tasks (fa, fb) answer slowly enough that two gex run processes started together overlap under load
        await sleep(tag === 'slow' ? 4000 : tag === 'endless' ? 8000 : tag.startsWith('f') ? 2000 : 150);
        calls.set(tag, [...(calls.get(tag) ?? []), [arrived, Date.now()]]);
        return { body: { data: [{ id: 1, tag }] } };
      },
    });
    const made = await runGex(['tokens', 'create', '--description', 'ci', '--store', store], KEY);
    assert.equal(made.code, 0, made.stderr);
    token = made.stdout.trim();
    retrying = await startServe(['--store', store, '--workers', '0', '--retries', '1', '--log-level', 'debug'], KEY);
    plain = await startServe(['--store', store, '--workers', '0'], KEY);
    for (const tag of ['a', 'b', 'fa', 'fb', 'slow', 'endless']) {
      const configuration = {
        parameters: {
          api: { baseUrl: `${api.url}/v1/` },
          config: { outputBucket: `w-${tag}`, jobs: [{ endpoint: 'users', dataField: 'data', params: { tag } }] },
        },
        // a configuration may lower the workers' --job-timeout
        ...(tag === 'endless' ? { runtime: { process_timeout: 2 } } : {}),
      };
      const created = await call(plain.url, token, 'POST', CONFIGS, { name: tag, configuration });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      configs[tag] = String(created.body.id);
    }
    workers.push(
      ...(await Promise.all(
        [1, 2, 3].map(() => startWorker(store, KEY, ['--concurrency', '2', '--log-level', 'debug'])),
      )),
    );
  });
  after(async () => {
    for (const child of [retrying?.child, plain?.child, ...workers.map((w) => w.child)]) child?.kill('SIGTERM');
    // every server and worker stops on SIGTERM (nothing left open keeps it alive)
    const all = [retrying, plain, ...workers].filter((p) => p !== undefined);
    await Promise.race([Promise.all(all.map((p) => exited(p.child))), sleep(20_000)]);
    const stuck = all.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
    for (const p of stuck) p.child.kill('SIGKILL');
    await api?.close();
    await withPostgresClient(url, (c) =>
      c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; DROP SCHEMA IF EXISTS ${schema}_pgboss CASCADE`),
    );
    assert.deepEqual(
      stuck.map((p) => p.output()),
      [],
      'a server or worker did not stop on SIGTERM',
    );
  });

  it("runs a burst of one configuration's jobs exactly once each, never two at a time, in order, beside another configuration", async () => {
    const servers = [retrying.url, plain.url];
    const a: Json[] = [];
    const b: Json[] = [];
    for (let i = 0; i < 6; i++) {
      a.push(await create(servers[i % 2], configs.a));
      if (i % 2) b.push(await create(servers[(i + 1) % 2], configs.b));
    }
    const done = await Promise.all([...a, ...b].map((j) => untilFinished(plain.url, token, j.id, 90_000)));
    assert.deepEqual(
      done.map((j) => j.status),
      Array(9).fill('success'),
      JSON.stringify(done.map((j) => j.result)),
    );
    const spans = (calls.get('a') ?? []).sort((x, y) => x[0] - y[0]);
    assert.equal(spans.length, 6, 'each job ran exactly once');
    for (let i = 1; i < spans.length; i++)
      assert.ok(spans[i][0] >= spans[i - 1][1], `request ${i} of configuration a overlapped the previous one`);
    const started = done.slice(0, 6).map((j) => j.startTime as string);
    assert.deepEqual([...started].sort(), started, 'in the order they were created');
    assert.equal((calls.get('b') ?? []).length, 3);
    const window = (j: Json) => [Date.parse(j.startTime), Date.parse(j.endTime)];
    assert.ok(
      done.slice(6).some((bj) => {
        const [from, to] = window(bj);
        return done.slice(0, 6).some((aj) => from < window(aj)[1] && window(aj)[0] < to);
      }),
      "configuration b's jobs ran while a's were running",
    );
  });

  it("runs a flow's phases on the workers: each phase's tasks handed out together, in parallel, the next after them", async () => {
    const flow = await call(
      plain.url,
      token,
      'POST',
      '/v2/storage/branch/default/components/keboola.orchestrator/configs',
      {
        name: 'flow',
        configuration: {
          phases: [
            { id: 1, name: 'one', dependsOn: [] },
            { id: 2, name: 'two', dependsOn: [1] },
          ],
          tasks: [1, 2].flatMap((phase) =>
            ['fa', 'fb'].map((tag) => ({
              id: `${tag}${phase}`,
              name: tag,
              phase,
              task: { componentId: 'ex-generic-v2', configId: configs[tag], mode: 'run' },
            })),
          ),
        },
      },
    );
    assert.equal(flow.status, 201, JSON.stringify(flow.body));

    const root = (
      await call(plain.url, token, 'POST', '/jobs', { component: 'keboola.orchestrator', config: flow.body.id })
    ).body;
    const done = await untilFinished(plain.url, token, root.id, 90_000);
    assert.equal(done.status, 'success', JSON.stringify(done.result));
    const [a1, a2] = calls.get('fa')!;
    const [b1, b2] = calls.get('fb')!;
    assert.ok(a2 && b2, 'each task ran');
    assert.ok(a1[0] < b1[1] && b1[0] < a1[1], `phase one's tasks a ${a1} b ${b1}: not in parallel`);
    assert.ok(a2[0] < b2[1] && b2[0] < a2[1], `phase two's tasks a ${a2} b ${b2}: not in parallel`);
    assert.ok(Math.min(a2[0], b2[0]) >= Math.max(a1[1], b1[1]), 'phase two started before phase one ended');
  });

  it('a kill sent to a server that runs nothing stops the job on the worker that runs it', async () => {
    const job = await create(retrying.url, configs.slow);
    await untilJob(plain.url, token, job.id, 20_000, (j) => j.status === 'processing');
    const killing = await call(plain.url, token, 'POST', `/jobs/${job.id}/kill`);
    assert.equal(killing.body.status, 'terminating');
    const killed = await untilFinished(retrying.url, token, job.id, 15_000);
    assert.equal(killed.status, 'terminated');
  });

  it("a configuration's runtime.process_timeout ends a job that runs too long as error", async () => {
    const job = await create(plain.url, configs.endless);
    const ended = await untilFinished(plain.url, token, job.id, 30_000);
    assert.equal(ended.status, 'error');
    assert.match(ended.result.message, /timed out after 2 seconds/);
  });

  it('gex jobs run on the store itself dispatches to the workers like the API (--wait exits 0)', async () => {
    const started = Date.now();
    const r = await runGex(['jobs', 'run', configs.b, '--store', store, '--wait', '--json'], KEY);
    assert.equal(r.code, 0, r.stderr);
    const printed = r.stdout.trim().split('\n');
    assert.equal(JSON.parse(printed[printed.length - 1]).status, 'success');
    assert.ok(Date.now() - started < 30_000, 'not left for the once-a-minute reconcile');
  });

  it('kill -9 of a worker: its gex run is gone at once, its job ends (or is retried) within 60 s, the next job runs', async () => {
    // no retries: the lost job ends as error and the configuration's next job runs
    const lost = await create(plain.url, configs.slow);
    const next = await create(plain.url, configs.slow);
    await untilJob(plain.url, token, lost.id, 20_000, (j) => j.status === 'processing');
    const victim = await untilRunner();
    victim.child.kill('SIGKILL');
    const killedAt = Date.now();
    await exited(victim.child);
    for (let i = 0; i < 50 && (await childrenOf(victim.child.pid!)).length > 0; i++) await sleep(100);
    assert.deepEqual(await childrenOf(victim.child.pid!), [], "the job's gex run did not outlive its worker");
    const ended = await untilFinished(plain.url, token, lost.id, 60_000);
    assert.equal(ended.status, 'error');
    assert.match(ended.result.message, /worker stopped/);
    assert.ok(Date.now() - killedAt < 60_000, `found after ${Date.now() - killedAt} ms`);
    assert.equal((await untilFinished(plain.url, token, next.id, 60_000)).status, 'success');

    // with --retries 1 on the server that created it: run again on another worker
    const retried = await create(retrying.url, configs.slow);
    await untilJob(plain.url, token, retried.id, 20_000, (j) => j.status === 'processing');
    const second = await untilRunner();
    second.child.kill('SIGKILL');
    const done = await untilFinished(plain.url, token, retried.id, 90_000);
    assert.equal(done.status, 'success', JSON.stringify(done.result));
    const events = await call(plain.url, token, 'GET', `/v2/storage/events?runId=${retried.runId}`);
    assert.ok(
      events.body.some((e: Json) => /retrying, attempt 2 of 2/.test(e.message)),
      JSON.stringify(events.body.map((e: Json) => e.message)),
    );
  });
});
