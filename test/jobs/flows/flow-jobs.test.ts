import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { runGex, startServe } from '../../support/cli.js';
import { call, untilFinished, type Json } from '../../support/queue.js';
import { tagConfigs } from '../../support/flow-setup.js';

const KEY = { GEX_MASTER_KEY: '6b'.repeat(32) };
const CONFIGS = '/v2/storage/branch/default/components/ex-generic-v2/configs';
const flowConfigs = (component: string) => `/v2/storage/branch/default/components/${component}/configs`;

/**
 * Flows on a real gex serve with its worker pool: the job tree Keboola's clients read, phases in
 * order with their tasks in parallel (measured at a local API), continueOnFailure, a failed phase
 * cancelling the rest, conditional transitions, a subset run and a kill of the flow. Every task is a
 * real `gex run` process.
 */
describe('flow jobs (gex serve --workers)', function () {
  this.timeout(180_000);
  let dir: string;
  let api: FixtureServer;
  let served: { child: ChildProcess; url: string };
  let token: string;
  let store: string;
  /** per tag: when each request arrived and was answered */
  const calls = new Map<string, Array<[number, number]>>();
  const configs: Record<string, string> = {};

  const flow = async (component: string, configuration: Json): Promise<string> => {
    const made = await call(served.url, token, 'POST', flowConfigs(component), { name: 'flow', configuration });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    return String(made.body.id);
  };
  const task = (id: string, phase: string, tag: string, more: Json = {}) => ({
    id,
    name: `task ${id}`,
    phase,
    task: { componentId: 'ex-generic-v2', configId: configs[tag], mode: 'run' },
    ...more,
  });
  const run = async (component: string, config: string, more: Json = {}) => {
    const created = await call(served.url, token, 'POST', '/jobs', { component, config, ...more });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.body;
  };
  const tree = async (root: Json): Promise<Json[]> =>
    (await call(served.url, token, 'GET', `/search/jobs?parentRunId=${root.runId}&limit=100&sortOrder=asc`))
      .body as unknown as Json[];

  const waiting = new Map<string, () => void>();
  const bothArrived = (tag: string): Promise<void> => {
    const other = waiting.get(tag === 'a' ? 'b' : 'a');
    if (other) {
      waiting.set(tag, () => undefined);
      other();
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 10_000);
      waiting.set(tag, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  };

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-flow-jobs-'));
    store = path.join(dir, 'store.sqlite');
    api = await startFixtureServer({
      handler: async (r) => {
        const tag = new URL(r.url, 'http://x').searchParams.get('tag') ?? '?';
        const arrived = Date.now();
        // the first a and b (the first test's phase): each waits up to 10 s for the other, so their
        // overlap does not hang on how fast two gex run processes start on a busy machine
        if ((tag === 'a' || tag === 'b') && !waiting.has(tag)) await bothArrived(tag);
        await sleep(tag.startsWith('slow') ? 6000 : 300);
        calls.set(tag, [...(calls.get(tag) ?? []), [arrived, Date.now()]]);
        if (tag.startsWith('bad')) return { status: 404, body: { error: 'no such thing' } };
        if (tag === 'flaky' && calls.get(tag)!.length === 1) return { status: 404, body: { error: 'not yet' } };
        return { body: { data: [{ id: 1, tag }] } };
      },
    });
    const made = await runGex(['tokens', 'create', '--description', 'ci', '--store', store], KEY);
    assert.equal(made.code, 0, made.stderr);
    token = made.stdout.trim();
    served = await startServe(['--store', store, '--workers', '3'], KEY);
    Object.assign(
      configs,
      await tagConfigs(served.url, token, api.url, ['a', 'b', 'c', 'd', 'bad', 'slow', 'flaky'], 'f'),
    );
  });
  after(async () => {
    served?.child.kill('SIGTERM');
    await api?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("runs keboola.orchestrator as Keboola's job tree: a phase's tasks together, the next phase after them", async () => {
    calls.clear();
    const id = await flow('keboola.orchestrator', {
      phases: [
        { id: 1, name: 'Extract', dependsOn: [] },
        { id: 2, name: 'Load', dependsOn: [1] },
      ],
      tasks: [
        task('10', '1', 'a'),
        task('11', '1', 'b'),
        task('12', '2', 'c'),
        task('13', '2', 'd', { enabled: false }),
      ],
    });
    const root = await run('keboola.orchestrator', id);
    assert.equal(root.type, 'orchestrationContainer');
    assert.equal(root.parentRunId, '');
    const done = await untilFinished(served.url, token, root.id, 60_000);
    assert.equal(done.status, 'success', JSON.stringify(done.result));
    const jobs = await tree(root);
    const phases = jobs.filter((j) => j.type === 'phaseContainer');
    const tasks = jobs.filter((j) => j.type === 'standard');
    assert.deepEqual(
      phases.map((p) => [p.configData.phaseId, p.status, p.parentRunId, p.orchestrationJobId]),
      [
        ['1', 'success', root.runId, root.id],
        ['2', 'success', root.runId, root.id],
      ],
    );
    assert.deepEqual(tasks.map((t) => [t.orchestrationTaskId, t.status]).sort(), [
      ['10', 'success'],
      ['11', 'success'],
      ['12', 'success'],
    ]);
    for (const t of tasks) {
      const phase = phases.find((p) => p.configData.tasks.includes(t.orchestrationTaskId));
      assert.equal(t.parentRunId, phase?.runId);
      assert.equal(t.runId, `${phase?.runId}.${t.id}`);
      assert.equal(t.orchestrationJobId, root.id);
    }
    // a and b overlapped; c started after both ended
    const [a] = calls.get('a')!;
    const [b] = calls.get('b')!;
    const [c] = calls.get('c')!;
    assert.ok(a[0] < b[1] && b[0] < a[1], `a ${a} b ${b}: not in parallel`);
    assert.ok(c[0] >= Math.max(a[1], b[1]), `c ${c} started before a ${a} and b ${b} ended`);
    assert.equal(calls.get('d'), undefined);
    // the root's result: Keboola's flow result document
    const result = done.result;
    assert.deepEqual(result.flow, { jobId: root.id });
    assert.deepEqual(
      result.phases.map((p: Json) => [p.id, p.status]),
      [
        ['1', 'success'],
        ['2', 'success'],
      ],
    );
    assert.deepEqual(
      result.tasks.map((t: Json) => [t.id, t.status, t.results.length]),
      [
        ['10', 'success', 1],
        ['11', 'success', 1],
        ['12', 'success', 1],
        ['13', 'skipped', 0],
      ],
    );
    const byType = await call(served.url, token, 'GET', `/search/jobs?type=phaseContainer&limit=100`);
    assert.deepEqual((byType.body as unknown as Json[]).map((j) => j.id).sort(), phases.map((p) => p.id).sort());
  });

  it('a failed task fails its phase and cancels the next; continueOnFailure goes on and ends warning', async () => {
    const failing = await flow('keboola.orchestrator', {
      phases: [
        { id: 'x', name: 'X' },
        { id: 'y', name: 'Y', dependsOn: ['x'] },
      ],
      tasks: [task('1', 'x', 'bad'), task('2', 'y', 'a')],
    });
    const failed = await untilFinished(served.url, token, (await run('keboola.orchestrator', failing)).id, 60_000);
    assert.equal(failed.status, 'error');
    assert.deepEqual(
      failed.result.phases.map((p: Json) => p.status),
      ['error', 'cancelled'],
    );
    const tolerant = await flow('keboola.orchestrator', {
      phases: [
        { id: 'x', name: 'X' },
        { id: 'y', name: 'Y', dependsOn: ['x'] },
      ],
      tasks: [task('1', 'x', 'bad', { continueOnFailure: true }), task('2', 'y', 'a')],
    });
    const warned = await untilFinished(served.url, token, (await run('keboola.orchestrator', tolerant)).id, 60_000);
    assert.equal(warned.status, 'warning');
    assert.deepEqual(
      warned.result.phases.map((p: Json) => p.status),
      ['warning', 'success'],
    );
  });

  it('keboola.flow takes the first transition that holds, and a subset runs only its tasks', async () => {
    const failedAny = {
      type: 'operator',
      operator: 'ANY_TASKS_IN_PHASE',
      phase: 'first',
      operands: [
        {
          type: 'operator',
          operator: 'EQUALS',
          operands: [
            { type: 'task', task: '*', value: 'job.status' },
            { type: 'const', value: 'error' },
          ],
        },
      ],
    };
    const id = await flow('keboola.flow', {
      phases: [
        {
          id: 'first',
          name: 'First',
          next: [
            { id: 'f', condition: failedAny, goto: 'repair' },
            { id: 'ok', goto: 'last' },
          ],
        },
        { id: 'repair', name: 'Repair', next: [{ id: 'end', goto: null }] },
        { id: 'last', name: 'Last' },
      ],
      tasks: [
        {
          ...task('t1', 'first', 'bad'),
          task: { type: 'job', componentId: 'ex-generic-v2', configId: configs.bad, mode: 'run' },
        },
        {
          ...task('t2', 'repair', 'a'),
          task: { type: 'job', componentId: 'ex-generic-v2', configId: configs.a, mode: 'run' },
        },
        {
          ...task('t3', 'last', 'b'),
          task: { type: 'job', componentId: 'ex-generic-v2', configId: configs.b, mode: 'run' },
        },
      ],
    });
    const done = await untilFinished(served.url, token, (await run('keboola.flow', id)).id, 60_000);
    assert.equal(done.status, 'warning', JSON.stringify(done.result));
    assert.deepEqual(
      done.result.phases.map((p: Json) => [p.id, p.status]),
      [
        ['first', 'error'],
        ['repair', 'success'],
        ['last', 'cancelled'],
      ],
    );
    const subset = await untilFinished(
      served.url,
      token,
      (await run('keboola.flow', id, { onlyFlowTaskIds: ['t3'] })).id,
      60_000,
    );
    assert.deepEqual(
      subset.result.tasks.map((t: Json) => [t.id, t.status]),
      [
        ['t1', 'skipped'],
        ['t2', 'skipped'],
        ['t3', 'success'],
      ],
    );
    const both = await call(served.url, token, 'POST', '/jobs', {
      component: 'keboola.flow',
      config: id,
      onlyFlowTaskIds: ['t1'],
      onlyOrchestrationTaskIds: ['t1'],
    });
    assert.equal(both.status, 400);
  });

  it("a task naming a deleted configuration, another project's or an unknown component fails with the reason; the flow follows its rules", async () => {
    const gone = await call(served.url, token, 'POST', CONFIGS, { name: 'gone', configuration: { parameters: {} } });
    assert.equal(gone.status, 201);
    assert.equal((await call(served.url, token, 'DELETE', `${CONFIGS}/${gone.body.id}`)).status, 204);
    const made = await runGex(
      ['tokens', 'create', '--description', 'other', '--project', 'other', '--store', store],
      KEY,
    );
    assert.equal(made.code, 0, made.stderr);
    const theirs = await call(served.url, made.stdout.trim(), 'POST', CONFIGS, {
      name: 'their private name',
      configuration: { parameters: {} },
    });
    assert.equal(theirs.status, 201, JSON.stringify(theirs.body));
    const failing = (id: string, componentId: string, configId: string) => ({
      id,
      name: id,
      phase: '1',
      continueOnFailure: true,
      task: { componentId, configId, mode: 'run' },
    });
    const id = await flow('keboola.orchestrator', {
      phases: [
        { id: 1, name: 'Odd ones' },
        { id: 2, name: 'After', dependsOn: [1] },
      ],
      tasks: [
        failing('deleted', 'ex-generic-v2', String(gone.body.id)),
        failing('theirs', 'ex-generic-v2', String(theirs.body.id)),
        failing('unknown', 'kds-team.ex-nothing-such', '1'),
        task('after', '2', 'a'),
      ],
    });
    const done = await untilFinished(served.url, token, (await run('keboola.orchestrator', id)).id, 60_000);
    assert.equal(done.status, 'warning', JSON.stringify(done.result));
    const byId = new Map<string, Json>(done.result.tasks.map((t: Json) => [t.id, t]));
    assert.equal(byId.get('after')?.status, 'success');
    const jobs = await tree({ runId: done.runId });
    for (const [taskId, reason] of [
      ['deleted', /not found|deleted|does not exist/i],
      ['theirs', /not found|does not exist/i],
      ['unknown', /component/i],
    ] as const) {
      assert.equal(byId.get(taskId)?.status, 'error', taskId);
      const job = jobs.find((j) => j.orchestrationTaskId === taskId);
      assert.match(String(job?.result?.message ?? ''), reason, `${taskId}: ${JSON.stringify(job?.result)}`);
    }
    // the other project's configuration was never read: its name is nowhere in this project's answer
    assert.doesNotMatch(JSON.stringify(jobs), /their private name/);
  });

  it('keboola.flow: a task retried on a matching error after its delay, and a task that waits out its own delay', async () => {
    calls.delete('flaky');
    const id = await flow('keboola.flow', {
      phases: [
        { id: 'one', name: 'One', next: [{ id: 'on', goto: 'two' }] },
        { id: 'two', name: 'Two' },
      ],
      tasks: [
        {
          ...task('flaky', 'one', 'flaky'),
          task: {
            type: 'job',
            componentId: 'ex-generic-v2',
            configId: configs.flaky,
            mode: 'run',
            retry: {
              strategy: 'linear',
              strategyParams: { maxRetries: 2, delay: 1 },
              retryOn: [{ type: 'errorMessageContains', value: '404' }],
            },
          },
        },
        {
          ...task('later', 'two', 'a'),
          task: { type: 'job', componentId: 'ex-generic-v2', configId: configs.a, mode: 'run', delay: 2 },
        },
      ],
    });
    calls.delete('a');
    const done = await untilFinished(served.url, token, (await run('keboola.flow', id)).id, 60_000);
    assert.equal(done.status, 'success', JSON.stringify(done.result));
    const flaky = calls.get('flaky')!;
    assert.equal(flaky.length, 2, 'one retry');
    assert.ok(flaky[1][0] - flaky[0][1] >= 1000, `retried ${flaky[1][0] - flaky[0][1]} ms after the failure`);
    const retried = done.result.tasks.find((t: Json) => t.id === 'flaky');
    assert.equal(retried.results.length, 2, 'both attempts in the result');
    const [later] = calls.get('a')!;
    assert.ok(later[0] - flaky[1][1] >= 2000, `the delayed task began ${later[0] - flaky[1][1]} ms after phase one`);
  });

  it('a kill of a task job fails its phase as an error would: the next phase is cancelled', async () => {
    const id = await flow('keboola.orchestrator', {
      phases: [
        { id: 1, name: 'Slow' },
        { id: 2, name: 'After', dependsOn: [1] },
      ],
      tasks: [task('1', '1', 'slow'), task('2', '2', 'a')],
    });
    const root = await run('keboola.orchestrator', id);
    let slow: Json | undefined;
    for (const until = Date.now() + 30_000; slow?.status !== 'processing' && Date.now() < until; await sleep(100))
      slow = (await tree(root)).find((j) => j.orchestrationTaskId === '1');
    assert.equal(slow?.status, 'processing');
    const killed = await call(served.url, token, 'POST', `/jobs/${slow.id}/kill`);
    assert.ok([200, 202].includes(killed.status), JSON.stringify(killed.body));
    const done = await untilFinished(served.url, token, root.id, 60_000);
    assert.equal(done.status, 'error', JSON.stringify(done.result));
    assert.deepEqual(
      done.result.phases.map((p: Json) => p.status),
      ['error', 'cancelled'],
    );
    assert.deepEqual(
      (await tree(root)).filter((j) => j.type === 'standard').map((t) => [t.orchestrationTaskId, t.status]),
      [['1', 'terminated']],
    );
  });

  it('a kill of the flow terminates its running task and cancels the phases after it', async () => {
    const id = await flow('keboola.orchestrator', {
      phases: [
        { id: 1, name: 'Slow' },
        { id: 2, name: 'After', dependsOn: [1] },
      ],
      tasks: [task('1', '1', 'slow'), task('2', '2', 'a')],
    });
    const root = await run('keboola.orchestrator', id);
    const deadline = Date.now() + 30_000;
    while (!calls.get('slow')?.length && Date.now() < deadline) {
      const slowTask = (await tree(root)).find((j) => j.orchestrationTaskId === '1');
      if (slowTask?.status === 'processing') break;
      await sleep(100);
    }
    const killed = await call(served.url, token, 'POST', `/jobs/${root.id}/kill`);
    assert.ok([200, 202].includes(killed.status), JSON.stringify(killed.body));
    const done = await untilFinished(served.url, token, root.id, 60_000);
    assert.equal(done.status, 'terminated');
    const jobs = await tree(root);
    assert.deepEqual(
      jobs.filter((j) => j.type === 'phaseContainer').map((p) => p.status),
      ['terminated', 'cancelled'],
    );
    assert.deepEqual(
      jobs.filter((j) => j.type === 'standard').map((t) => t.status),
      ['terminated'],
    );
  });
});
