import assert from 'node:assert/strict';
import { fromPlain } from '../../../src/json/index.js';
import { parseFlowDefinition } from '../../../src/store/flows/flow-definition.js';
import { FLOW_COMPONENT_ID, FLOW_LIMITS, ORCHESTRATOR_COMPONENT_ID } from '../../../src/store/flows/flow-model.js';
import { FlowDefinitionError } from '../../../src/store/flows/flow-problems.js';

const legacy = (body: unknown, self?: { configId: string }) =>
  parseFlowDefinition(ORCHESTRATOR_COMPONENT_ID, fromPlain(body), self);
const conditional = (body: unknown) => parseFlowDefinition(FLOW_COMPONENT_ID, fromPlain(body));

const job = (configId: string, extra: object = {}) => ({
  componentId: 'ex-generic-v2',
  configId,
  mode: 'run',
  ...extra,
});

/** The paths a refusal names, in the order found. */
function refusedPaths(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof FlowDefinitionError, String(error));
    assert.equal(error.status, 400);
    assert.match(error.message, /Nothing was stored\.$/);
    return (error.details ?? []).map((d) => d.key);
  }
  assert.fail('accepted');
}

describe('flow definitions', () => {
  describe('keboola.orchestrator', () => {
    it("reads Keboola's example: integer and string ids compared as strings, phases in dependsOn order", () => {
      const flow = legacy({
        phases: [
          { id: '27406', name: 'Load', dependsOn: [26427] },
          { id: 26427, name: 'Extract', dependsOn: [] },
        ],
        tasks: [
          {
            id: 30679,
            name: 'Shop',
            phase: 26427,
            enabled: true,
            continueOnFailure: false,
            task: { ...job('shop'), configRowIds: ['users'] },
          },
          { id: 30680, name: 'Off', phase: '27406', enabled: false, task: { componentId: 'ex-generic-v2' } },
        ],
      });
      assert.deepEqual(
        flow.phases.map((p) => p.id),
        ['26427', '27406'],
      );
      assert.deepEqual(
        flow.tasks.map((t) => [t.id, t.phase, t.enabled]),
        [
          ['30679', '26427', true],
          ['30680', '27406', false],
        ],
      );
      assert.deepEqual(flow.tasks[0]?.action, {
        type: 'job',
        componentId: 'ex-generic-v2',
        configId: 'shop',
        mode: 'run',
        configRowIds: ['users'],
        delaySeconds: 0,
        retry: undefined,
      });
    });

    it('takes an empty configuration (a flow just created) as no phases and no tasks', () => {
      assert.deepEqual(legacy({}).phases, []);
      assert.deepEqual(legacy({ phases: [], tasks: [] }).tasks, []);
    });

    it('refuses, naming each path: missing names, bad and duplicate ids, unknown phases, self-dependence', () => {
      const paths = refusedPaths(() =>
        legacy({
          phases: [
            { id: 'a', name: '' },
            { id: 'a', name: 'Again' },
            { id: 1.5, name: 'Float' },
            { id: 'b', name: 'B', dependsOn: ['b', 'nope'] },
          ],
          tasks: [
            { id: 't', name: 'T', phase: 'x', task: job('c') },
            { id: 't', name: 'T2', phase: 'a', task: job('d') },
            { id: true, name: 'Bool', phase: 'a', task: job('e') },
          ],
        }),
      );
      assert.deepEqual(paths, [
        'phases[0].name',
        'phases[2].id',
        'phases[1].id',
        'tasks[2].id',
        'tasks[0].phase',
        'tasks[1].id',
        'phases[3].dependsOn[0]',
        'phases[3].dependsOn[1]',
      ]);
    });

    it('refuses a dependsOn cycle, naming its phases', () => {
      try {
        legacy({
          phases: [
            { id: 1, name: 'A', dependsOn: [2] },
            { id: 2, name: 'B', dependsOn: [1] },
            { id: 3, name: 'C' },
          ],
          tasks: [],
        });
        assert.fail('accepted');
      } catch (error) {
        assert.ok(error instanceof FlowDefinitionError);
        assert.match(error.message, /phases: dependsOn forms a cycle among the phases "1", "2"/);
      }
    });

    it('requires componentId and configId of an enabled task, refuses configData and a flow as a task', () => {
      const paths = refusedPaths(() =>
        legacy(
          {
            phases: [{ id: 'p', name: 'P' }],
            tasks: [
              { id: 1, name: 'No component', phase: 'p', task: { configId: 'x' } },
              { id: 2, name: 'No config', phase: 'p', task: { componentId: 'ex-generic-v2' } },
              {
                id: 3,
                name: 'Inline',
                phase: 'p',
                task: { componentId: 'ex-generic-v2', configData: { parameters: {} } },
              },
              { id: 4, name: 'Itself', phase: 'p', task: { componentId: 'keboola.orchestrator', configId: 'me' } },
              { id: 5, name: 'Other flow', phase: 'p', task: { componentId: 'keboola.flow', configId: 'other' } },
              { id: 6, name: 'No task', phase: 'p' },
            ],
          },
          { configId: 'me' },
        ),
      );
      assert.deepEqual(paths, [
        'tasks[0].task.componentId',
        'tasks[1].task.configId',
        'tasks[2].task.configData',
        'tasks[2].task.configId',
        'tasks[5].task',
        'tasks[3].task.componentId',
        'tasks[4].task.componentId',
      ]);
    });

    it('bounds the size of a flow and of its answer', () => {
      const many = Array.from({ length: FLOW_LIMITS.tasksPerPhase + 1 }, (_, i) => ({
        id: i,
        name: `T${i}`,
        phase: 'p',
        task: job(`c${i}`),
      }));
      assert.deepEqual(
        refusedPaths(() => legacy({ phases: [{ id: 'p', name: 'P' }], tasks: many })),
        [`tasks[${FLOW_LIMITS.tasksPerPhase}].phase`],
      );
      const huge = 'x'.repeat(500_000);
      const bad = Array.from({ length: 300 }, (_, i) => ({ id: i, name: 'T', phase: huge, task: job('c') }));
      try {
        legacy({ phases: [{ id: 'p', name: 'P' }], tasks: bad });
        assert.fail('accepted');
      } catch (error) {
        assert.ok(error instanceof FlowDefinitionError);
        assert.ok(error.message.length < 5_000, `${error.message.length} characters`);
        assert.match(error.message, /and 281 more\. Nothing was stored\.$/);
      }
    });
  });

  describe('keboola.flow', () => {
    const phases = [
      {
        id: 'extract',
        name: 'Extract',
        retry: { strategy: 'linear', strategyParams: { maxRetries: 2, delay: 5 } },
        next: [
          {
            id: 'ok',
            condition: {
              type: 'operator',
              operator: 'ALL_TASKS_IN_PHASE',
              phase: 'extract',
              operands: [
                {
                  type: 'operator',
                  operator: 'EQUALS',
                  operands: [
                    { type: 'task', task: 't1', value: 'job.status' },
                    { type: 'const', value: 'success' },
                  ],
                },
              ],
            },
            goto: 'load',
          },
          { id: 'else', goto: null },
        ],
      },
      { id: 'load', name: 'Load' },
    ];

    it('reads transitions with conditions, retries, delays and notification tasks', () => {
      const flow = conditional({
        phases,
        tasks: [
          {
            id: 't1',
            name: 'Shop',
            phase: 'extract',
            task: {
              type: 'job',
              ...job('shop'),
              delay: '30',
              retry: { retryOn: [{ type: 'errorMessageContains', value: 'timeout' }] },
            },
          },
          {
            id: 't2',
            name: 'Tell',
            phase: 'load',
            task: {
              type: 'notification',
              title: 'Done',
              channel: { type: 'webhook', recipients: ['https://hooks.example.com/x'] },
            },
          },
        ],
      });
      assert.deepEqual(
        flow.phases.map((p) => [p.id, p.next.map((n) => n.goto)]),
        [
          ['extract', ['load', null]],
          ['load', []],
        ],
      );
      assert.deepEqual(flow.phases[0]?.retry, { maxRetries: 2, delaySeconds: 5, retryOn: [] });
      const shop = flow.tasks[0]?.action;
      assert.ok(shop?.type === 'job');
      assert.equal(shop.delaySeconds, 30);
      assert.deepEqual(shop.retry, {
        maxRetries: 3,
        delaySeconds: 10,
        retryOn: [{ type: 'errorMessageContains', value: 'timeout' }],
      });
      assert.deepEqual(flow.tasks[1]?.action, {
        type: 'notification',
        channel: 'webhook',
        recipients: ['https://hooks.example.com/x'],
        title: 'Done',
        message: '',
      });
    });

    it('refuses unknown operators and operands, goto and conditions naming nothing, variable tasks, bad retries', () => {
      const paths = refusedPaths(() =>
        conditional({
          phases: [
            {
              id: 'a',
              name: 'A',
              next: [
                { id: '1', condition: { type: 'operator', operator: 'XOR', operands: [] }, goto: 'b' },
                { id: '2', condition: { type: 'variable', value: 'x' }, goto: 'b' },
                { id: '3', condition: { type: 'phase', phase: 'zz', value: 'status' }, goto: 'nowhere' },
                { id: '4', condition: { type: 'task', task: 'nope', value: 'job.status' }, goto: null },
                { id: '5' },
              ],
            },
            { id: 'b', name: 'B', retry: { strategy: 'exponential', strategyParams: { maxRetries: 99 } } },
          ],
          tasks: [
            { id: 'v', name: 'Var', phase: 'a', task: { type: 'variable', name: 'x', value: '1' } },
            {
              id: 'w',
              name: 'Hook',
              phase: 'b',
              task: {
                type: 'notification',
                title: 'T',
                channel: { type: 'webhook', recipients: ['file:///etc/passwd'] },
              },
            },
          ],
        }),
      );
      assert.deepEqual(paths, [
        'phases[0].next[0].condition.operator',
        'phases[0].next[1].condition.type',
        'phases[0].next[4].goto',
        'phases[1].retry.strategy',
        'phases[1].retry.strategyParams.maxRetries',
        'tasks[0].task.type',
        'tasks[1].task.channel.recipients[0]',
        'phases[0].next[2].goto',
        'phases[0].next[2].condition.phase',
        'phases[0].next[3].condition.task',
      ]);
    });
  });
});
