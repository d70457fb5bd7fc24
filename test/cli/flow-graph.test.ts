import assert from 'node:assert/strict';
import { flowGraph } from '../../src/cli/output/flow-graph.js';
import { flowResultDocument } from '../../src/jobs/flows/flow-result.js';
import { fromPlain } from '../../src/json/index.js';
import { parseFlowDefinition } from '../../src/store/flows/flow-definition.js';

describe('flow graph and result document', () => {
  const legacy = parseFlowDefinition(
    'keboola.orchestrator',
    fromPlain({
      phases: [
        { id: 2, name: 'Load', dependsOn: [1] },
        { id: 1, name: 'Extract\u001b[2J' },
      ],
      tasks: [
        {
          id: 10,
          name: 'Shop',
          phase: 1,
          task: { componentId: 'ex-generic-v2', configId: 'shop', configRowIds: ['users'] },
        },
        {
          id: 11,
          name: 'Off',
          phase: 1,
          enabled: false,
          continueOnFailure: true,
          task: { componentId: 'ex-generic-v2', configId: 'x' },
        },
        { id: 12, name: 'Orders', phase: 2, task: { componentId: 'ex-generic-v2', configId: 'orders' } },
      ],
    }),
  );

  it('draws phases in run order with their tasks; a hostile name cannot reach the terminal raw', () => {
    const text = flowGraph(legacy, { phases: new Map([['1', 'success']]), tasks: new Map([['10', 'success']]) });
    assert.ok(!text.includes('\u001b'), text);
    const lines = text.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^"Extract\\u001b\[2J" \[phase 1\] {2}success$/);
    assert.equal(lines[1], '  ├─ Shop [task 10]: ex-generic-v2 shop rows users  success');
    assert.equal(lines[2], '  └─ Off [task 11]: ex-generic-v2 x (disabled, continue on failure)');
    assert.equal(lines[3], 'Load [phase 2]');
    assert.match(lines[4] ?? '', /^ {2}after: "Extract/);
  });

  it('draws keboola.flow transitions with their conditions', () => {
    const flow = parseFlowDefinition(
      'keboola.flow',
      fromPlain({
        phases: [
          {
            id: 'a',
            name: 'A',
            next: [
              {
                id: 'bad',
                condition: {
                  type: 'operator',
                  operator: 'EQUALS',
                  operands: [
                    { type: 'phase', phase: 'a', value: 'status' },
                    { type: 'const', value: 'error' },
                  ],
                },
                goto: null,
              },
              { id: 'on', goto: 'b' },
            ],
          },
          { id: 'b', name: 'B' },
        ],
        tasks: [
          {
            id: 't',
            name: 'T',
            phase: 'a',
            task: { type: 'job', componentId: 'ex-generic-v2', configId: 'c', mode: 'run' },
          },
        ],
      }),
    );
    assert.equal(
      flowGraph(flow),
      [
        'A [phase a]',
        '  ├─ T [task t]: ex-generic-v2 c',
        '  ├─ → end when phase a status EQUALS "error"',
        '  └─ → B',
        'B [phase b]',
        '  (no tasks)',
        '  → end',
        '',
      ].join('\n'),
    );
  });

  it("builds Keboola's result document: each phase and task, one result per attempt", () => {
    const at = Date.UTC(2026, 11, 2, 6, 0, 0);
    const doc = flowResultDocument(
      '100',
      legacy,
      new Map([['1', { jobId: '101', status: 'success' as const, startedAt: at, endedAt: at + 61_000 }]]),
      new Map([
        [
          '10',
          [
            { jobId: '103', status: 'error' as const, message: 'timed out', startedAt: at, endedAt: at + 10_000 },
            {
              jobId: '104',
              status: 'success' as const,
              message: undefined,
              startedAt: at + 20_000,
              endedAt: at + 60_000,
            },
          ],
        ],
      ]),
      at + 120_000,
    );
    assert.deepEqual(doc.flow, { jobId: '100' });
    assert.deepEqual(
      doc.phases.map((p) => [p.id, p.jobId, p.status, p.duration]),
      [
        ['1', '101', 'success', 61],
        ['2', '', 'waiting', null],
      ],
    );
    const shop = doc.tasks[0];
    assert.deepEqual(
      [shop?.jobId, shop?.status, shop?.startTime, shop?.duration],
      ['104', 'success', '2026-12-02T06:00:00.000Z', 60],
    );
    assert.deepEqual(
      shop?.results.map((r) => [r.jobId, r.status, r.result.message]),
      [
        ['103', 'error', 'timed out'],
        ['104', 'success', ''],
      ],
    );
    assert.equal(doc.tasks[1]?.status, 'skipped');
  });
});
