import assert from 'node:assert/strict';
import { fromPlain } from '../../../src/json/index.js';
import type { FlowAction, TaskAttempt } from '../../../src/jobs/flows/flow-snapshot.js';
import { nextFlowStep } from '../../../src/jobs/flows/flow-step.js';
import type { JobStatus } from '../../../src/jobs/statuses.js';
import { parseFlowDefinition } from '../../../src/store/flows/flow-definition.js';
import type { FlowComponentId, FlowDefinition } from '../../../src/store/flows/flow-model.js';

/** A flow run held in memory as the store would hold it, advanced only by nextFlowStep's actions. */
class SimulatedRun {
  phases = new Map<string, JobStatus>();
  phaseStartedAt = new Map<string, number>();
  attempts = new Map<string, TaskAttempt[]>();
  entered: string[] = [];
  killed = false;
  ended: { status: string; message: string } | undefined;
  now = 1_000_000;
  started: string[][] = [];
  private jobs = 0;

  constructor(
    readonly definition: FlowDefinition,
    readonly onlyTaskIds?: Set<string>,
  ) {
    for (const phase of definition.phases) this.phases.set(phase.id, 'waiting');
  }

  /** when the last step must be looked at again: a wakeAt, or a task start it deferred */
  wake: number | undefined;

  /** One step: what nextFlowStep decides, applied as the store applies it (a start before its time waits). */
  step(): FlowAction[] {
    this.wake = undefined;
    const actions = nextFlowStep({
      definition: this.definition,
      onlyTaskIds: this.onlyTaskIds,
      phases: this.phases,
      phaseStartedAt: this.phaseStartedAt,
      attempts: this.attempts,
      entered: this.entered,
      killed: this.killed,
      now: this.now,
    });
    const startedNow: string[] = [];
    for (const action of actions) {
      if (action.type === 'startPhase') {
        this.phases.set(action.phaseId, 'processing');
        this.phaseStartedAt.set(action.phaseId, this.now);
        this.entered.push(action.phaseId);
      } else if (action.type === 'startTask' && action.notBefore > this.now) {
        this.wake = Math.min(this.wake ?? Infinity, action.notBefore);
      } else if (action.type === 'wakeAt') {
        this.wake = Math.min(this.wake ?? Infinity, action.at);
      } else if (action.type === 'startTask' || action.type === 'notify') {
        const list = this.attempts.get(action.taskId) ?? [];
        const done = action.type === 'notify';
        list.push({
          jobId: `job${++this.jobs}`,
          status: done ? 'success' : 'processing',
          message: undefined,
          startedAt: this.now,
          endedAt: done ? this.now : undefined,
        });
        this.attempts.set(action.taskId, list);
        startedNow.push(action.taskId);
      } else if (action.type === 'endPhase') this.phases.set(action.phaseId, action.status);
      else if (action.type === 'terminateTask') {
        for (const list of this.attempts.values())
          for (const a of list) if (a.jobId === action.jobId) a.status = 'terminating';
      } else if (action.type === 'endFlow') this.ended = { status: action.status, message: action.message };
    }
    if (startedNow.length) this.started.push(startedNow);
    return actions;
  }

  finish(taskId: string, status: JobStatus, message?: string): void {
    const last = this.attempts.get(taskId)?.at(-1);
    assert.ok(last && (last.status === 'processing' || last.status === 'terminating'), `${taskId} is not running`);
    last.status = status;
    last.message = message;
    last.endedAt = this.now;
  }

  /** Ends every running task as `outcome` says (success unless named), stepping until the flow ends. */
  runToEnd(outcome: Record<string, JobStatus | JobStatus[]> = {}, maxSteps = 50): void {
    const runs = new Map<string, number>();
    this.step();
    for (let i = 0; i < maxSteps && !this.ended; i++) {
      for (const [taskId, list] of this.attempts) {
        const last = list.at(-1);
        if (last?.status !== 'processing') continue;
        const n = runs.get(taskId) ?? 0;
        runs.set(taskId, n + 1);
        const wanted = outcome[taskId];
        const status = Array.isArray(wanted) ? (wanted[n] ?? 'success') : (wanted ?? 'success');
        this.finish(taskId, status, status === 'error' ? 'Connection timed out' : undefined);
      }
      this.step();
      if (this.wake !== undefined) this.now = this.wake;
    }
  }
}

const flow = (componentId: FlowComponentId, body: unknown) => parseFlowDefinition(componentId, fromPlain(body));
const job = (configId: string, more: object = {}) => ({ componentId: 'ex-generic-v2', configId, mode: 'run', ...more });
const task = (id: string, phase: string, more: object = {}) => ({ id, name: id, phase, task: job(id), ...more });

describe('flow steps', () => {
  describe('keboola.orchestrator', () => {
    const legacy = (tasks: object[]) =>
      flow('keboola.orchestrator', {
        phases: [
          { id: 'load', name: 'Load', dependsOn: ['extract'] },
          { id: 'extract', name: 'Extract' },
        ],
        tasks,
      });

    it("runs a phase's tasks together and a phase after the phases it depends on", () => {
      const run = new SimulatedRun(legacy([task('a', 'extract'), task('b', 'extract'), task('c', 'load')]));
      run.runToEnd();
      assert.deepEqual(run.started, [['a', 'b'], ['c']]);
      assert.deepEqual(run.ended, { status: 'success', message: '' });
      assert.deepEqual(
        Object.fromEntries(run.phases),
        Object.fromEntries([
          ['load', 'success'],
          ['extract', 'success'],
        ]),
      );
    });

    it('a failed task fails its phase and cancels the phases after it', () => {
      const run = new SimulatedRun(legacy([task('a', 'extract'), task('b', 'extract'), task('c', 'load')]));
      run.runToEnd({ b: 'error' });
      assert.deepEqual(run.started, [['a', 'b']]);
      assert.equal(run.ended?.status, 'error');
      assert.deepEqual(
        Object.fromEntries(run.phases),
        Object.fromEntries([
          ['load', 'cancelled'],
          ['extract', 'error'],
        ]),
      );
    });

    it('continueOnFailure lets the flow go on and end warning', () => {
      const run = new SimulatedRun(legacy([task('a', 'extract', { continueOnFailure: true }), task('c', 'load')]));
      run.runToEnd({ a: 'error' });
      assert.deepEqual(run.started, [['a'], ['c']]);
      assert.equal(run.ended?.status, 'warning');
    });

    it('skips disabled tasks, runs only a subset, and passes a phase with nothing to run', () => {
      const definition = legacy([task('a', 'extract', { enabled: false }), task('b', 'extract'), task('c', 'load')]);
      const run = new SimulatedRun(definition, new Set(['c']));
      run.runToEnd();
      assert.deepEqual(run.started, [['c']]);
      assert.equal(run.ended?.status, 'success');
    });

    it('decides the same again from the same state: a step taken twice starts nothing twice', () => {
      const run = new SimulatedRun(legacy([task('a', 'extract'), task('c', 'load')]));
      run.step();
      assert.deepEqual(run.step(), []);
      run.finish('a', 'success');
      const next = run.step();
      assert.deepEqual(
        next.map((a) => a.type),
        ['endPhase', 'startPhase', 'startTask'],
      );
      assert.deepEqual(run.step(), []);
    });

    it('a killed flow terminates its running tasks, then ends terminated with the rest cancelled', () => {
      const run = new SimulatedRun(legacy([task('a', 'extract'), task('c', 'load')]));
      run.step();
      run.killed = true;
      assert.deepEqual(run.step(), [{ type: 'terminateTask', jobId: 'job1' }]);
      assert.deepEqual(run.step(), []);
      run.finish('a', 'terminated');
      run.step();
      assert.equal(run.ended?.status, 'terminated');
      assert.deepEqual(
        Object.fromEntries(run.phases),
        Object.fromEntries([
          ['load', 'cancelled'],
          ['extract', 'terminated'],
        ]),
      );
    });

    it("a task waits out its delay, counted from its phase's start however often the flow looks", () => {
      const run = new SimulatedRun(legacy([{ ...task('a', 'extract'), task: job('a', { delay: 30 }) }]));
      const start = run.now;
      const first = run.step();
      assert.deepEqual(
        first.find((a) => a.type === 'startTask'),
        { type: 'startTask', taskId: 'a', notBefore: start + 30_000 },
      );
      // looked at again before its time (another task ended, a wake): the same moment, nothing started
      run.now = start + 10_000;
      assert.deepEqual(
        run.step().find((a) => a.type === 'startTask'),
        { type: 'startTask', taskId: 'a', notBefore: start + 30_000 },
      );
      assert.deepEqual(run.started, []);
      run.now = start + 30_000;
      run.step();
      assert.deepEqual(run.started, [['a']]);
      run.runToEnd();
      assert.equal(run.ended?.status, 'success');
    });
  });

  describe('keboola.flow', () => {
    const failed = (phase: string) => ({
      type: 'operator',
      operator: 'ANY_TASKS_IN_PHASE',
      phase,
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
    });
    const conditional = (
      next: object[],
      tasks: object[] = [task('a', 'first'), task('fix', 'repair'), task('z', 'last')],
    ) =>
      flow('keboola.flow', {
        phases: [
          { id: 'first', name: 'First', next },
          { id: 'repair', name: 'Repair', next: [{ id: 'on', goto: 'last' }] },
          { id: 'last', name: 'Last' },
        ],
        tasks: tasks.map((t) => ({ ...t, task: { type: 'job', ...(t as { task: object }).task } })),
      });

    it('takes the first transition that holds; goto null ends the flow', () => {
      const run = new SimulatedRun(
        conditional([
          { id: 'failed', condition: failed('first'), goto: 'repair' },
          { id: 'ok', goto: null },
        ]),
      );
      run.runToEnd();
      assert.deepEqual(run.started, [['a']]);
      assert.equal(run.ended?.status, 'success');
      assert.deepEqual(
        Object.fromEntries(run.phases),
        Object.fromEntries([
          ['first', 'success'],
          ['repair', 'cancelled'],
          ['last', 'cancelled'],
        ]),
      );
    });

    it('a transition that accepts a failure carries the flow on, and it ends warning', () => {
      const run = new SimulatedRun(
        conditional([
          { id: 'failed', condition: failed('first'), goto: 'repair' },
          { id: 'ok', goto: 'last' },
        ]),
      );
      run.runToEnd({ a: 'error' });
      assert.deepEqual(run.started, [['a'], ['fix'], ['z']]);
      assert.equal(run.ended?.status, 'warning');
    });

    it('a failed phase with no condition to handle it ends the flow error', () => {
      const run = new SimulatedRun(conditional([{ id: 'on', goto: 'last' }]));
      run.runToEnd({ a: 'error' });
      assert.deepEqual(run.started, [['a']]);
      assert.equal(run.ended?.status, 'error');
      assert.match(run.ended?.message ?? '', /The phase First failed/);
    });

    it('no transition holding ends the flow error; a phase entered twice is refused at run time', () => {
      const none = new SimulatedRun(conditional([{ id: 'failed', condition: failed('first'), goto: 'repair' }]));
      none.runToEnd();
      assert.match(none.ended?.message ?? '', /No transition of the phase First holds/);
      const loop = flow('keboola.flow', {
        phases: [{ id: 'p', name: 'P', next: [{ id: 'again', goto: 'p' }] }],
        tasks: [{ id: 't', name: 't', phase: 'p', task: { type: 'job', ...job('t') } }],
      });
      const looping = new SimulatedRun(loop);
      looping.runToEnd();
      assert.deepEqual(looping.started, [['t']]);
      assert.match(looping.ended?.message ?? '', /would run a second time/);
    });

    it('retries a task whose error matches retryOn, after the delay, up to maxRetries', () => {
      const retry = {
        strategy: 'linear',
        strategyParams: { maxRetries: 2, delay: 10 },
        retryOn: [{ type: 'errorMessageContains', value: 'timed out' }],
      };
      const definition = conditional(
        [{ id: 'end', goto: null }],
        [{ ...task('a', 'first'), task: job('a', { retry }) }],
      );
      const run = new SimulatedRun(definition);
      const start = run.now;
      run.runToEnd({ a: ['error', 'error', 'success'] });
      assert.deepEqual(
        run.attempts.get('a')?.map((a) => a.status),
        ['error', 'error', 'success'],
      );
      assert.equal(run.now - start, 20_000);
      assert.equal(run.ended?.status, 'success');
      const gaveUp = new SimulatedRun(definition);
      gaveUp.runToEnd({ a: ['error', 'error', 'error', 'success'] });
      assert.equal(gaveUp.attempts.get('a')?.length, 3);
      assert.equal(gaveUp.ended?.status, 'error');
    });

    it('a notification task is sent once, and ALL_TASKS_IN_PHASE reads each task', () => {
      const all = {
        type: 'operator',
        operator: 'ALL_TASKS_IN_PHASE',
        phase: 'first',
        operands: [
          {
            type: 'operator',
            operator: 'EQUALS',
            operands: [
              { type: 'task', task: '*', value: 'job.status' },
              { type: 'const', value: 'success' },
            ],
          },
        ],
      };
      const notify = {
        id: 'tell',
        name: 'Tell',
        phase: 'last',
        task: { title: 'Done', channel: { type: 'webhook', recipients: ['https://example.com/h'] } },
      };
      const definition = flow('keboola.flow', {
        phases: [
          {
            id: 'first',
            name: 'First',
            next: [
              { id: 'all', condition: all, goto: 'last' },
              { id: 'else', goto: null },
            ],
          },
          { id: 'last', name: 'Last' },
        ],
        tasks: [
          { ...task('a', 'first'), task: { type: 'job', ...job('a') } },
          { ...task('b', 'first'), task: { type: 'job', ...job('b') } },
          { ...notify, task: { type: 'notification', ...notify.task } },
        ],
      });
      const run = new SimulatedRun(definition);
      run.runToEnd();
      assert.deepEqual(run.started, [['a', 'b'], ['tell']]);
      assert.equal(run.ended?.status, 'success');
      const oneFailed = new SimulatedRun(definition);
      oneFailed.runToEnd({ b: 'error' });
      assert.deepEqual(oneFailed.started, [['a', 'b']]);
    });
  });
});
