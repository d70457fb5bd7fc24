import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { runGex, startServe } from '../../support/cli.js';
import { call, startWorker, untilFinished, type Json, type Worker } from '../../support/queue.js';
import { inSchema, POSTGRES_VARIABLE, postgresBackend, withPostgresClient } from '../../support/store.js';

const KEY = { GEX_MASTER_KEY: '6f'.repeat(32) };
const CONFIGS = '/v2/storage/branch/default/components/ex-generic-v2/configs';
const FLOWS = '/v2/storage/branch/default/components/keboola.orchestrator/configs';
const PHASES = 2;
const PER_PHASE = 5;

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** A local API that records when each tag's request arrived and was answered (~150 ms later). */
async function recordingApi(): Promise<{ api: FixtureServer; spans: Map<string, Array<[number, number]>> }> {
  const spans = new Map<string, Array<[number, number]>>();
  const api = await startFixtureServer({
    handler: async (r) => {
      const tag = new URL(r.url, 'http://x').searchParams.get('tag') ?? '?';
      const arrived = Date.now();
      await sleep(150);
      spans.set(tag, [...(spans.get(tag) ?? []), [arrived, Date.now()]]);
      return { body: { data: [{ id: 1, tag }] } };
    },
  });
  return { api, spans };
}

/**
 * A flow of PHASES × PER_PHASE tasks, each its own configuration (so nothing but the workers
 * keeps them apart), run to its end through `server`; asserts every task succeeded, once, one
 * at a time, and each phase after the one before.
 */
async function tenTaskFlow(server: string, token: string, apiUrl: string, spans: Map<string, Array<[number, number]>>) {
  const tasks: Json[] = [];
  for (let p = 1; p <= PHASES; p++)
    for (let t = 1; t <= PER_PHASE; t++) {
      const tag = `p${p}t${t}`;
      const configuration = {
        parameters: {
          api: { baseUrl: `${apiUrl}/v1/` },
          config: { outputBucket: `ow-${tag}`, jobs: [{ endpoint: 'users', dataField: 'data', params: { tag } }] },
        },
      };
      const created = await call(server, token, 'POST', CONFIGS, { name: tag, configuration });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      tasks.push({
        id: tag,
        name: tag,
        phase: p,
        task: { componentId: 'ex-generic-v2', configId: String(created.body.id), mode: 'run' },
      });
    }
  const phases = Array.from({ length: PHASES }, (_, i) => ({
    id: i + 1,
    name: `phase ${i + 1}`,
    dependsOn: i ? [i] : [],
  }));
  const flow = await call(server, token, 'POST', FLOWS, { name: 'ten tasks', configuration: { phases, tasks } });
  assert.equal(flow.status, 201, JSON.stringify(flow.body));
  const root = await call(server, token, 'POST', '/jobs', { component: 'keboola.orchestrator', config: flow.body.id });
  assert.equal(root.status, 201, JSON.stringify(root.body));
  const done = await untilFinished(server, token, root.body.id, 120_000);
  assert.equal(done.status, 'success', JSON.stringify(done.result));
  const tree = (await call(server, token, 'GET', `/search/jobs?parentRunId=${root.body.runId}&type=standard&limit=100`))
    .body as unknown as Json[];
  assert.deepEqual(
    tree.map((j) => [j.orchestrationTaskId, j.status]).sort(),
    tasks.map((t) => [t.id, 'success']).sort(),
  );
  // each task's request once; no two at once; phase 2's after all of phase 1's
  const all = tasks.map((t) => {
    const seen = spans.get(t.id as string) ?? [];
    assert.equal(seen.length, 1, `task ${t.id}: ${seen.length} requests`);
    return { tag: t.id as string, phase: t.phase as number, span: seen[0] };
  });
  all.sort((a, b) => a.span[0] - b.span[0]);
  for (let i = 1; i < all.length; i++)
    assert.ok(
      all[i].span[0] >= all[i - 1].span[1],
      `${all[i].tag} ${all[i].span} overlapped ${all[i - 1].tag} ${all[i - 1].span}: two tasks ran at once`,
    );
  assert.deepEqual(
    all.map((a) => a.phase),
    [...Array(PER_PHASE).fill(1), ...Array(PER_PHASE).fill(2)],
  );
}

/**
 * "No worker held while waiting": a flow's root and phase jobs hold no worker, so a flow of ten
 * tasks completes with one worker slot — on `gex serve --workers 1` (SQLite) and on one
 * `gex worker --concurrency 1` of a PostgreSQL store. Real processes throughout.
 */
describe('a flow of 10 tasks on a single worker slot', function () {
  this.timeout(240_000);

  it('SQLite: gex serve --workers 1 runs it to success, one task process at a time', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-flow-one-worker-'));
    const store = path.join(dir, 'store.sqlite');
    const { api, spans } = await recordingApi();
    let served: Awaited<ReturnType<typeof startServe>> | undefined;
    try {
      const made = await runGex(['tokens', 'create', '--description', 'ci', '--store', store], KEY);
      assert.equal(made.code, 0, made.stderr);
      served = await startServe(['--store', store, '--workers', '1'], KEY);
      await tenTaskFlow(served.url, made.stdout.trim(), api.url, spans);
    } finally {
      served?.child.kill('SIGTERM');
      if (served) await exited(served.child);
      await api.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('PostgreSQL: one gex worker --concurrency 1 runs it to success (a gex serve --workers 0 takes the calls)', async function () {
    const url = process.env[POSTGRES_VARIABLE]?.trim();
    if (!postgresBackend() || !url) {
      console.warn(`\n  !!! SKIPPED: no PostgreSQL (set ${POSTGRES_VARIABLE})\n`);
      this.skip();
    }
    const schema = `gex_test_flow_worker_${process.pid}_${randomBytes(3).toString('hex')}`;
    const store = inSchema(url, schema);
    await withPostgresClient(url, (c) => c.query(`CREATE SCHEMA ${schema}`));
    const { api, spans } = await recordingApi();
    let served: Awaited<ReturnType<typeof startServe>> | undefined;
    let worker: Worker | undefined;
    try {
      const made = await runGex(['tokens', 'create', '--description', 'ci', '--store', store], KEY);
      assert.equal(made.code, 0, made.stderr);
      served = await startServe(['--store', store, '--workers', '0'], KEY);
      worker = await startWorker(store, KEY, ['--concurrency', '1']);
      await tenTaskFlow(served.url, made.stdout.trim(), api.url, spans);
    } finally {
      const started = [served, worker].filter((p) => p !== undefined);
      for (const p of started) p.child.kill('SIGTERM');
      await Promise.race([Promise.all(started.map((p) => exited(p.child))), sleep(20_000)]);
      for (const p of started) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
      await api.close();
      await withPostgresClient(url, (c) =>
        c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; DROP SCHEMA IF EXISTS ${schema}_pgboss CASCADE`),
      );
    }
  });
});
