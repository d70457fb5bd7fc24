import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  startFixtureServer,
  type FixtureServer,
  type RecordedRequest,
} from '../../support/fixture-server/fixture-server.js';
import { runGex, startServe } from '../../support/cli.js';
import { call, childrenOf, startWorker, untilFinished, type Json, type Worker } from '../../support/queue.js';
import { inSchema, POSTGRES_VARIABLE, postgresBackend, withPostgresClient } from '../../support/store.js';
import { tagConfigs } from '../../support/flow-setup.js';

const KEY = { GEX_MASTER_KEY: '6c'.repeat(32) };
const FLOWS = (component: string) => `/v2/storage/branch/default/components/${component}/configs`;

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** A local API that records, per tag, when each request arrived and was answered; a test may act on one. */
class RecordingApi {
  readonly calls = new Map<string, Array<[number, number]>>();
  readonly hooks: RecordedRequest[] = [];
  /** what happens as a request arrives (before it is answered) or right after its answer */
  onArrive: ((tag: string) => void) | undefined;
  onAnswered: ((tag: string) => void) | undefined;
  server!: FixtureServer;

  async start(delayMs: (tag: string) => number): Promise<void> {
    this.server = await startFixtureServer({
      handler: async (r) => {
        if (r.url.startsWith('/hook')) {
          this.hooks.push(r);
          this.onArrive?.('hook');
          return { body: { ok: true } };
        }
        const tag = new URL(r.url, 'http://x').searchParams.get('tag') ?? '?';
        const arrived = Date.now();
        this.onArrive?.(tag);
        await sleep(delayMs(tag));
        this.calls.set(tag, [...(this.calls.get(tag) ?? []), [arrived, Date.now()]]);
        const after = this.onAnswered;
        if (after) setImmediate(() => after(tag));
        return { body: { data: [{ id: 1, tag }] } };
      },
    });
  }

  reset(): void {
    this.calls.clear();
    this.hooks.length = 0;
    this.onArrive = undefined;
    this.onAnswered = undefined;
  }

  /** no two requests of one tag overlapped (one job per configuration at a time) */
  assertNoOverlap(tag: string): void {
    const spans = [...(this.calls.get(tag) ?? [])].sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < spans.length; i++)
      assert.ok(
        spans[i][0] >= spans[i - 1][1],
        `two jobs of configuration ${tag} ran at once: ${JSON.stringify(spans)}`,
      );
  }
}

/** Every task ran in one job that succeeded; its requests are no more than that job's attempts. */
async function assertEachTaskOnce(
  url: string,
  token: string,
  root: Json,
  api: RecordingApi,
  tagOf: Record<string, string>,
  /** tags other jobs request too: their count is checked by the caller */
  shared: ReadonlySet<string> = new Set(),
): Promise<void> {
  const tree = (await call(url, token, 'GET', `/search/jobs?parentRunId=${root.runId}&limit=100`)).body as Json[];
  const tasks = tree.filter((j) => j.type === 'standard');
  assert.deepEqual(
    tasks.map((t) => t.orchestrationTaskId).sort(),
    Object.keys(tagOf).sort(),
    'one job per task: none skipped, none twice',
  );
  for (const t of tasks) {
    assert.equal(t.status, 'success', `task ${t.orchestrationTaskId}: ${JSON.stringify(t.result)}`);
    const events = (await call(url, token, 'GET', `/v2/storage/events?runId=${t.runId}&limit=1000`)).body as Json[];
    const attempts = 1 + events.filter((e) => /: retrying, attempt \d+ of/.test(String(e.message))).length;
    const tag = tagOf[t.orchestrationTaskId];
    const requests = api.calls.get(tag)?.length ?? 0;
    if (shared.has(tag)) continue;
    assert.ok(
      requests >= 1 && requests <= attempts,
      `task ${t.orchestrationTaskId}: ${requests} requests for ${attempts} attempts`,
    );
  }
}

/**
 * Issue 35 item 5: a flow's progress lives in the store. kill -9 of the process that advances a
 * flow, at chosen moments (a task running, a phase's last task just answered, a notification in
 * flight): the restarted server (SQLite) or another worker (PostgreSQL) carries it on within 60 s,
 * no task runs beyond its attempts, none is skipped, and the root's result says what happened.
 */
describe('flows survive kill -9 of the process advancing them', function () {
  this.timeout(240_000);

  describe('SQLite: the restarted server carries the flow on', () => {
    let dir: string;
    let store: string;
    let token: string;
    const api = new RecordingApi();
    let served: { child: ChildProcess; url: string } | undefined;
    const configs: Record<string, string> = {};
    let flowId: string;
    const tagOf = { a: 'a', b: 'b', c: 'c', d: 'd' };
    const serve = () => startServe(['--store', store, '--workers', '2', '--retries', '1'], KEY);

    before(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'gex-flow-crash-'));
      store = path.join(dir, 'store.sqlite');
      await api.start((tag) => (tag === 'b' ? 600 : 300));
      const made = await runGex(['tokens', 'create', '--description', 'ci', '--store', store], KEY);
      assert.equal(made.code, 0, made.stderr);
      token = made.stdout.trim();
      served = await serve();
      Object.assign(configs, await tagConfigs(served.url, token, api.server.url, Object.values(tagOf), 'k'));
      const job = (id: string, phase: string) => ({
        id,
        name: `task ${id}`,
        phase,
        task: { type: 'job', componentId: 'ex-generic-v2', configId: configs[id], mode: 'run' },
      });
      const made2 = await call(served.url, token, 'POST', FLOWS('keboola.flow'), {
        name: 'crash',
        configuration: {
          phases: [
            { id: 'p1', name: 'One', next: [{ id: 't1', goto: 'p2' }] },
            { id: 'p2', name: 'Two', next: [{ id: 't2', goto: 'p3' }] },
            { id: 'p3', name: 'Three', next: [{ id: 't3', goto: null }] },
          ],
          tasks: [
            job('a', 'p1'),
            job('b', 'p1'),
            job('c', 'p2'),
            {
              id: 'tell',
              name: 'Tell',
              phase: 'p2',
              task: {
                type: 'notification',
                title: 'Phase two',
                channel: { type: 'webhook', recipients: [`${api.server.url}/hook`] },
              },
            },
            job('d', 'p3'),
          ],
        },
      });
      assert.equal(made2.status, 201, JSON.stringify(made2.body));
      flowId = String(made2.body.id);
    });
    after(async () => {
      served?.child.kill('SIGTERM');
      await api.server?.close();
      await rm(dir, { recursive: true, force: true });
    });

    const moments: Array<{ label: string; arm: (kill: () => void) => void }> = [
      { label: 'while a task of the first phase runs', arm: (kill) => (api.onArrive = (t) => t === 'a' && kill()) },
      {
        label: "as the first phase's last task is answered",
        arm: (kill) => (api.onAnswered = (t) => t === 'b' && kill()),
      },
      {
        label: "a moment after the first phase's last task ended",
        arm: (kill) => (api.onAnswered = (t) => t === 'b' && void sleep(250).then(kill)),
      },
      { label: 'while the notification is in flight', arm: (kill) => (api.onArrive = (t) => t === 'hook' && kill()) },
    ];
    for (const moment of moments) {
      it(`kill -9 ${moment.label}`, async () => {
        api.reset();
        const victim = served!;
        let killed = false;
        moment.arm(() => {
          if (killed) return;
          killed = true;
          victim.child.kill('SIGKILL');
        });
        const root = (await call(victim.url, token, 'POST', '/jobs', { component: 'keboola.flow', config: flowId }))
          .body;
        assert.equal(root.type, 'orchestrationContainer', JSON.stringify(root));
        const deadline = Date.now() + 30_000;
        while (!killed && Date.now() < deadline) await sleep(20);
        assert.ok(killed, 'the moment came');
        api.onArrive = api.onAnswered = undefined;
        await exited(victim.child);
        served = await serve();
        const restarted = Date.now();
        const done = await untilFinished(served.url, token, root.id, 60_000);
        assert.ok(Date.now() - restarted < 60_000, `carried on after ${Date.now() - restarted} ms`);
        assert.equal(done.status, 'success', JSON.stringify(done.result));
        assert.deepEqual(
          done.result.phases.map((p: Json) => p.status),
          ['success', 'success', 'success'],
        );
        assert.deepEqual(
          done.result.tasks.map((t: Json) => [t.id, t.status]),
          [
            ['a', 'success'],
            ['b', 'success'],
            ['c', 'success'],
            ['tell', 'success'],
            ['d', 'success'],
          ],
        );
        await assertEachTaskOnce(served.url, token, root, api, tagOf);
        // phases in order, across the restart
        const lastEnd = (...tags: string[]) => Math.max(...tags.flatMap((t) => api.calls.get(t)!.map((c) => c[1])));
        const firstStart = (tag: string) => Math.min(...api.calls.get(tag)!.map((c) => c[0]));
        assert.ok(firstStart('c') >= lastEnd('a', 'b'), 'phase two started after phase one');
        assert.ok(firstStart('d') >= lastEnd('c'), 'phase three started after phase two');
        // the notification: delivered, at most once more when it was in flight, always with one delivery id
        assert.ok(api.hooks.length >= 1 && api.hooks.length <= 2, `${api.hooks.length} deliveries`);
        assert.equal(new Set(api.hooks.map((h) => h.headers['x-gex-delivery-id'])).size, 1);
        if (moment.label.includes('notification'))
          assert.equal(api.hooks.length, 2, 'the lost delivery was sent again');
      });
    }
  });

  describe('PostgreSQL: three workers, two flows and loose jobs; a worker killed mid-flow', () => {
    const url = process.env[POSTGRES_VARIABLE]?.trim();
    if (!postgresBackend() || !url) return;
    const schema = `gex_test_flowcrash_${process.pid}_${randomBytes(3).toString('hex')}`;
    const store = inSchema(url, schema);
    const api = new RecordingApi();
    let token: string;
    let served: { child: ChildProcess; url: string; output: () => string };
    const workers: Worker[] = [];
    const configs: Record<string, string> = {};

    before(async () => {
      await withPostgresClient(url, (c) => c.query(`CREATE SCHEMA ${schema}`));
      await api.start((tag) => (tag === 'x2' ? 1500 : 250));
      const made = await runGex(['tokens', 'create', '--description', 'ci', '--store', store], KEY);
      assert.equal(made.code, 0, made.stderr);
      token = made.stdout.trim();
      served = await startServe(['--store', store, '--workers', '0', '--retries', '1'], KEY);
      const tags = ['x1', 'x2', 'x3', 'y1', 'y2', 'shared', 'loose'];
      Object.assign(configs, await tagConfigs(served.url, token, api.server.url, tags, 'p'));
      workers.push(...(await Promise.all([1, 2, 3].map(() => startWorker(store, KEY, ['--concurrency', '2'])))));
    });
    after(async () => {
      for (const child of [served?.child, ...workers.map((w) => w.child)]) child?.kill('SIGTERM');
      await Promise.race([
        Promise.all([served, ...workers].filter(Boolean).map((p) => exited(p.child))),
        sleep(20_000),
      ]);
      for (const p of [served, ...workers])
        if (p && p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
      await api.server?.close();
      await withPostgresClient(url, (c) =>
        c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; DROP SCHEMA IF EXISTS ${schema}_pgboss CASCADE`),
      );
    });

    it('both flows end success, the per-configuration rule holds across workers, a killed worker loses nothing', async () => {
      const task = (id: string, tag: string, phase: number) => ({
        id,
        name: id,
        phase,
        task: { componentId: 'ex-generic-v2', configId: configs[tag], mode: 'run' },
      });
      const flow = async (configuration: Json) => {
        const made = await call(served.url, token, 'POST', FLOWS('keboola.orchestrator'), { name: 'f', configuration });
        assert.equal(made.status, 201, JSON.stringify(made.body));
        return String(made.body.id);
      };
      const first = await flow({
        phases: [
          { id: 1, name: 'One' },
          { id: 2, name: 'Two', dependsOn: [1] },
        ],
        tasks: [task('x1', 'x1', 1), task('x2', 'x2', 1), task('x3', 'x3', 2), task('s1', 'shared', 2)],
      });
      const second = await flow({
        phases: [
          { id: 1, name: 'One' },
          { id: 2, name: 'Two', dependsOn: [1] },
        ],
        tasks: [task('y1', 'y1', 1), task('s2', 'shared', 1), task('y2', 'y2', 2)],
      });
      const posted: Json[] = [];
      const post = async (body: Json) => {
        const r = await call(served.url, token, 'POST', '/jobs', body);
        assert.equal(r.status, 201, JSON.stringify(r.body));
        posted.push(r.body);
        return r.body;
      };
      // two flows and loose jobs interleaved; `shared` is a task of both flows and a loose job too
      const rootA = await post({ component: 'keboola.orchestrator', config: first });
      await post({ component: 'ex-generic-v2', config: configs.shared });
      const rootB = await post({ component: 'keboola.orchestrator', config: second });
      await post({ component: 'ex-generic-v2', config: configs.loose });
      await post({ component: 'ex-generic-v2', config: configs.shared });

      // the worker whose gex run runs task x2 (its job folder names the job) is killed -9 mid-task
      const treeOf = async (root: Json) =>
        (await call(served.url, token, 'GET', `/search/jobs?parentRunId=${root.runId}&limit=100`)).body as Json[];
      let victim: Worker | undefined;
      let x2: Json | undefined;
      for (const until = Date.now() + 30_000; !victim && Date.now() < until; await sleep(50)) {
        x2 = (await treeOf(rootA)).find((j) => j.orchestrationTaskId === 'x2');
        if (x2?.status !== 'processing') continue;
        for (const w of workers) {
          for (const pid of await childrenOf(w.child.pid!)) {
            const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
            if (cmdline.includes(`gex-job-${x2.id}-`)) victim = w;
          }
        }
      }
      assert.ok(victim, 'found the worker running task x2');
      victim.child.kill('SIGKILL');
      const killedAt = Date.now();
      await exited(victim.child);

      const [doneA, doneB] = await Promise.all(
        [rootA, rootB].map((root) => untilFinished(served.url, token, root.id, 90_000)),
      );
      assert.ok(Date.now() - killedAt < 60_000, `the flows ended ${Date.now() - killedAt} ms after the kill`);
      assert.equal(doneA.status, 'success', JSON.stringify(doneA.result));
      assert.equal(doneB.status, 'success', JSON.stringify(doneB.result));
      const x2Events = (await call(served.url, token, 'GET', `/v2/storage/events?runId=${x2!.runId}&limit=100`))
        .body as Json[];
      assert.ok(
        x2Events.some((e) => /worker stopped|retrying, attempt 2/.test(String(e.message))),
        'the lost attempt is said in its log',
      );
      for (const job of posted.filter((j) => j.type === 'standard')) {
        assert.equal((await untilFinished(served.url, token, job.id, 60_000)).status, 'success');
      }
      const shared = new Set(['shared']);
      await assertEachTaskOnce(served.url, token, rootA, api, { x1: 'x1', x2: 'x2', x3: 'x3', s1: 'shared' }, shared);
      await assertEachTaskOnce(served.url, token, rootB, api, { y1: 'y1', y2: 'y2', s2: 'shared' }, shared);
      // `shared`: two tasks and two loose jobs, one at a time across the three workers
      assert.equal(api.calls.get('shared')?.length, 4);
      for (const tag of api.calls.keys()) api.assertNoOverlap(tag);
      // phase order held in each flow
      const lastEnd = (...tags: string[]) => Math.max(...tags.flatMap((t) => api.calls.get(t)!.map((c) => c[1])));
      const firstStart = (tag: string) => Math.min(...api.calls.get(tag)!.map((c) => c[0]));
      assert.ok(firstStart('x3') >= lastEnd('x1', 'x2'));
      assert.ok(firstStart('y2') >= lastEnd('y1'));
    });
  });
});
