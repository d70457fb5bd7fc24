import assert from 'node:assert/strict';
import { JobRepository } from '../../../src/jobs/job-repository.js';
import { SUBSCRIPTION_SECRETS } from '../../../src/jobs/job-queue.js';
import { filtersMatch, type EventFacts } from '../../../src/jobs/notifications/event-match.js';
import { checkLongRuns } from '../../../src/jobs/notifications/long-run-check.js';
import { subscriptionInput } from '../../../src/jobs/notifications/subscription-input.js';
import { SubscriptionRepository } from '../../../src/jobs/notifications/subscription-repository.js';
import { decodeJson, fromPlain } from '../../../src/json/index.js';
import type { TokenInfo } from '../../../src/store/types.js';
import { runRequest } from '../../support/flow-setup.js';
import { storeBackends } from '../../support/store.js';

type Json = Record<string, unknown>;
const ok = { message: 'done', configVersion: '1', output: { tables: [] } };
const at = (s: number) => new Date(Date.parse('2026-12-02T10:00:00Z') + s * 1000);

/** Where events come from besides a run's end: a flow's phases and job, and long runs seen by the monitor. */
describe('notifications: phase events and long runs', function () {
  this.timeout(60_000);

  it('filters: == compares ids as text, the ordering operators numbers; a missing fact never matches', () => {
    const facts: EventFacts = {
      'job.component.id': 'ex-generic-v2',
      'job.configuration.id': '12',
      'job.id': '7',
      'branch.id': '1',
      durationOvertimePercentage: 0.55,
    };
    const f = (field: string, value: unknown, operator = '==') => ({ field, value, operator }) as never;
    assert.ok(filtersMatch([], facts));
    assert.ok(filtersMatch([f('job.configuration.id', 12)], facts));
    assert.ok(filtersMatch([f('job.id', '7'), f('branch.id', '1')], facts));
    assert.equal(filtersMatch([f('job.id', '8')], facts), false);
    assert.ok(filtersMatch([f('durationOvertimePercentage', 0.5, '>=')], facts));
    assert.equal(filtersMatch([f('durationOvertimePercentage', 0.6, '>=')], facts), false);
    assert.ok(filtersMatch([f('durationOvertimePercentage', 0.6, '<')], facts));
    assert.equal(filtersMatch([f('phase.id', '1')], facts), false, 'no phase: a phase filter does not match');
  });

  for (const factory of storeBackends()) {
    describe(factory.name, () => {
      let opened: Awaited<ReturnType<typeof factory.open>>;
      let jobs: JobRepository;
      let subscriptions: SubscriptionRepository;
      let token: TokenInfo;
      const subscribe = (event: string, filters: unknown[] = [], project = token.projectId) =>
        subscriptions.create(
          project,
          subscriptionInput(fromPlain({ event, filters, recipient: { channel: 'email', address: 'ops@example.com' } })),
        );
      const events = () =>
        opened.backend.db.all<Json>(
          'SELECT subscription_id, event, job_id, payload FROM notification_events ORDER BY id',
        );

      beforeEach(async () => {
        opened = await factory.open();
        token = (await opened.backend.createToken({ description: 'ci' })).info;
        jobs = new JobRepository(opened.backend.db);
        subscriptions = new SubscriptionRepository(
          opened.backend.db,
          opened.backend.projectSecrets(SUBSCRIPTION_SECRETS),
        );
      });
      afterEach(() => opened.dispose());

      /** a job of `config` that ran from `start` to `end` seconds and succeeded */
      const ran = async (config: string, start: number, end: number) => {
        const job = await jobs.create(runRequest(token, config), at(start));
        await jobs.claim(job.id, 'w1', at(start));
        await jobs.finish(job.id, () => ({ status: 'success', result: ok }), at(end));
      };

      it('job-processing-long fires once per job and subscription when the run passes the usual duration by the filter', async () => {
        // usual: (10 + 20 + 30) / 3 = 20 s
        await ran('a', 0, 10);
        await ran('a', 100, 120);
        await ran('a', 200, 230);
        const any = await subscribe('job-processing-long');
        const half = await subscribe('job-processing-long', [
          { field: 'durationOvertimePercentage', operator: '>=', value: 0.5 },
        ]);
        const otherConfig = await subscribe('job-processing-long', [{ field: 'job.configuration.id', value: 'b' }]);
        const stranger = (await opened.backend.createToken({ description: 'x', project: 'other' })).info;
        await subscribe('job-processing-long', [], stranger.projectId);
        const job = await jobs.create(runRequest(token, 'a'), at(1000));
        await jobs.claim(job.id, 'w1', at(1000));
        const fresh = await jobs.create(runRequest(token, 'never-ran'), at(1000));
        await jobs.claim(fresh.id, 'w1', at(1000));

        assert.equal(await checkLongRuns(opened.backend.db, at(1019)), 0, 'within its usual 20 s');
        assert.equal(await checkLongRuns(opened.backend.db, at(1025)), 1, '25 s: 25 % over');
        assert.equal(await checkLongRuns(opened.backend.db, at(1031)), 1, '31 s: 55 % over');
        assert.equal(await checkLongRuns(opened.backend.db, at(2000)), 0, 'once per job and subscription');
        const written = await events();
        assert.deepEqual(
          written.map((e) => [Number(e.subscription_id), e.event, Number(e.job_id)]),
          [
            [any.subscription.id, 'job-processing-long', job.id],
            [half.subscription.id, 'job-processing-long', job.id],
          ],
        );
        assert.ok(!written.some((e) => Number(e.subscription_id) === otherConfig.subscription.id));
        const payload = JSON.parse(String(written[1].payload));
        assert.equal(payload.averageDuration, 20);
        assert.equal(payload.currentDuration, 31);
        assert.equal(payload.durationOvertimePercentage, 0.55);
        assert.equal(payload.job.status, 'processing');

        // a later check (another process's monitor, after a restart) writes nothing again
        assert.equal(await checkLongRuns(opened.backend.db, at(5000)), 0);
      });

      it("a flow's phase and its job end with phase-job-… and job-… events; filters on phase.id", async () => {
        const phaseFailed = await subscribe('phase-job-failed', [{ field: 'phase.id', value: 'load' }]);
        const otherPhase = await subscribe('phase-job-failed', [{ field: 'phase.id', value: 'extract' }]);
        const flowFailed = await subscribe('job-failed', [
          { field: 'job.component.id', value: 'keboola.orchestrator' },
        ]);
        const taskFailed = await subscribe('job-failed', [{ field: 'job.component.id', value: 'ex-generic-v2' }]);
        const flow = await jobs.create(
          runRequest(token, 'flow', {
            componentId: 'keboola.orchestrator',
            flow: {
              definition: decodeJson(
                JSON.stringify({
                  phases: [{ id: 'load', name: 'Load' }],
                  tasks: [
                    {
                      id: '1',
                      name: 'a',
                      phase: 'load',
                      task: { componentId: 'ex-generic-v2', configId: 'a', mode: 'run' },
                    },
                  ],
                }),
              ),
              onlyTaskIds: null,
            },
          }),
        );
        const task = (await jobs.claimNext('w1'))!;
        await jobs.finish(task.id, () => ({
          status: 'error',
          result: { ...ok, message: 'boom', error: { type: 'user', message: 'boom' } },
        }));
        const written = await events();
        const by = (id: number) => written.filter((e) => Number(e.subscription_id) === id);
        assert.equal(by(taskFailed.subscription.id).length, 1, "the task's own job-failed");
        assert.equal(Number(by(taskFailed.subscription.id)[0].job_id), task.id);
        assert.equal(by(flowFailed.subscription.id).length, 1, "the flow's job-failed");
        assert.equal(Number(by(flowFailed.subscription.id)[0].job_id), flow.id);
        assert.equal(by(phaseFailed.subscription.id).length, 1, 'phase-job-failed of phase "load"');
        assert.equal(by(otherPhase.subscription.id).length, 0);
        const phase = JSON.parse(String(by(phaseFailed.subscription.id)[0].payload));
        assert.equal(phase.eventType, 'phase-job-failed');
        assert.equal(phase.phase.id, 'load');
      });
    });
  }
});
