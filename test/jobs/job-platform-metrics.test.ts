import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { GENERIC_EXTRACTOR_ID } from '../../src/cli/builtin-components.js';
import {
  COMPONENT_LABEL_LIMIT,
  JobPlatformMetrics,
  readQueueFigures,
  type QueueFigures,
} from '../../src/jobs/job-platform-metrics.js';
import { JobPlatform } from '../../src/jobs/job-platform.js';
import { JobRepository } from '../../src/jobs/job-repository.js';
import { subscriptionInput } from '../../src/jobs/notifications/subscription-input.js';
import { activateSchedule } from '../../src/jobs/schedules/schedule-activation.js';
import { ScheduleRepository } from '../../src/jobs/schedules/schedule-repository.js';
import { ScheduleTicker } from '../../src/jobs/schedules/schedule-ticker.js';
import { SCHEDULER_COMPONENT_ID } from '../../src/jobs/schedules/scheduler-component.js';
import { decodeJson, fromPlain } from '../../src/json/index.js';
import type { TokenInfo } from '../../src/store/types.js';
import { captureLogger } from '../support/extraction.js';
import { runRequest } from '../support/flow-setup.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { figure, parseExposition, typeOf, type Sample } from '../support/prometheus-text.js';
import { storeBackends, TEST_KEY } from '../support/store.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const ok = { message: 'done', configVersion: '1', output: { tables: [] } };
const failed = {
  message: 'The API answered 500',
  configVersion: '1',
  output: { tables: [] },
  error: { type: 'user' as const, message: 'The API answered 500' },
};
const HOUR = 3600_000;

async function scrape(registry: Registry): Promise<{ text: string; samples: Sample[] }> {
  const text = await registry.metrics();
  return { text, samples: parseExposition(text) };
}

async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('job metrics (JobPlatformMetrics)', function () {
  this.timeout(60_000);

  for (const factory of storeBackends()) {
    describe(factory.name, () => {
      let opened: Awaited<ReturnType<typeof factory.open>>;
      let token: TokenInfo;
      let receiver: WebhookReceiver;
      const platforms: JobPlatform[] = [];
      const closing: Array<() => Promise<void>> = [];

      beforeEach(async () => {
        opened = await factory.open();
        token = (await opened.backend.createToken({ description: 'ci' })).info;
        receiver = await startWebhookReceiver();
        // the failures' hook answers 500 (retried later), the successes' 200
        receiver.answer = (hook) => (hook.path.startsWith('/retry') ? 500 : 200);
      });
      afterEach(async () => {
        for (const p of platforms.splice(0)) await p.stop();
        for (const close of closing.splice(0)) await close();
        await receiver.close();
        await opened.dispose();
      });

      it('/metrics after a known set of jobs: every figure, counted where the end is committed or read from the database', async () => {
        const registry = new Registry();
        const capture = captureLogger('info');
        const platform = await JobPlatform.open(opened.backend, { logger: capture.logger, metrics: registry });
        platforms.push(platform);
        await platform.start();
        const jobs: JobRepository = platform.served.queue;
        const { subscriptions } = platform.served;
        const subscribe = (event: string, recipient: Record<string, string>) =>
          subscriptions.create(token.projectId, subscriptionInput(fromPlain({ event, recipient })));
        await subscribe('job-succeeded', { channel: 'webhook', url: `${receiver.url}/ok` });
        await subscribe('job-failed', { channel: 'webhook', url: `${receiver.url}/retry` });
        // no SMTP relay on this process: the e-mail fails at once (final)
        await subscribe('job-failed', { channel: 'email', address: 'ops@example.com' });

        const t0 = Date.now() - 3 * HOUR;
        const run = async (config: string, seconds: number, status: 'success' | 'error', componentId?: string) => {
          const job = await jobs.create(runRequest(token, config, componentId ? { componentId } : {}), new Date(t0));
          assert.ok(await jobs.claim(job.id, 'w1', new Date(t0)));
          assert.ok(
            await jobs.finish(
              job.id,
              () => ({ status, result: status === 'success' ? ok : failed }),
              new Date(t0 + seconds * 1000),
            ),
          );
          return job;
        };
        await run('a', 90, 'success');
        await run('a', 5, 'success');
        await run('b', 7200, 'error');
        // a hostile component id: counted as `invalid`, never written out
        await run('h', 1, 'success', 'x"} 1\n# TYPE evil counter');
        const cancelled = await jobs.create(runRequest(token, 'c'), new Date(t0));
        await jobs.kill(token.projectId, cancelled.id);
        // left in the queue: d1 next to run, d2 behind it, e1 running
        await jobs.create(runRequest(token, 'd'), new Date(t0 + 60_000));
        await jobs.create(runRequest(token, 'd'), new Date(t0 + 120_000));
        const e1 = await jobs.create(runRequest(token, 'e'), new Date(t0 + 180_000));
        assert.ok(await jobs.claim(e1.id, 'w1'));

        // 3 successes' hooks delivered, the failure's hook answered 500, its e-mail refused
        await until('the notifications attempted', () => receiver.received.length >= 4);
        await until('the attempts recorded', async () => {
          const { samples } = await scrape(registry);
          return (
            figure(samples, 'gex_notifications_sent_total', { channel: 'webhook' }) === 3 &&
            figure(samples, 'gex_notifications_retry_attempts_total', { channel: 'webhook' }) === 1 &&
            figure(samples, 'gex_notifications_failed_total', { channel: 'email' }) === 1
          );
        });
        // the queue figures are reused for a second: wait for a fresh read
        await new Promise((resolve) => setTimeout(resolve, 1100));
        const { text, samples } = await scrape(registry);
        const at = (name: string, labels: Record<string, string> = {}) => figure(samples, name, labels);

        assert.equal(typeOf(text, 'gex_jobs_finished_total'), 'counter');
        assert.equal(at('gex_jobs_finished_total', { component: 'ex-generic-v2', status: 'success' }), 2);
        assert.equal(at('gex_jobs_finished_total', { component: 'ex-generic-v2', status: 'error' }), 1);
        assert.equal(at('gex_jobs_finished_total', { component: 'ex-generic-v2', status: 'cancelled' }), 1);
        assert.equal(at('gex_jobs_finished_total', { component: 'invalid', status: 'success' }), 1);
        assert.equal(
          samples.filter((s) => s.name === 'gex_jobs_finished_total').length,
          4,
          'no other series (the running and waiting jobs have not ended)',
        );
        assert.equal(text.includes('evil'), false, 'the hostile id is not in the exposition');

        assert.equal(typeOf(text, 'gex_job_duration_seconds'), 'histogram');
        const bucket = (status: string, le: string) => at('gex_job_duration_seconds_bucket', { status, le });
        assert.equal(at('gex_job_duration_seconds_count', { status: 'success' }), 3);
        assert.equal(at('gex_job_duration_seconds_sum', { status: 'success' }), 96);
        assert.deepEqual(
          ['1', '5', '60', '120', '+Inf'].map((le) => bucket('success', le)),
          [1, 2, 2, 3, 3],
        );
        assert.equal(at('gex_job_duration_seconds_count', { status: 'error' }), 1);
        assert.equal(at('gex_job_duration_seconds_sum', { status: 'error' }), 7200);
        assert.deepEqual(
          ['3600', '7200', '14400'].map((le) => bucket('error', le)),
          [0, 1, 1],
        );
        assert.equal(at('gex_job_duration_seconds_count', { status: 'cancelled' }), 0, 'a cancelled job never ran');

        assert.equal(typeOf(text, 'gex_jobs_waiting'), 'gauge');
        assert.equal(at('gex_jobs_waiting'), 2);
        assert.equal(at('gex_jobs_processing'), 1);
        const age = at('gex_jobs_oldest_waiting_age_seconds')!;
        const expected = (Date.now() - (t0 + 60_000)) / 1000;
        assert.ok(age > expected - 5 && age <= expected, `oldest waiting ${age} s, expected about ${expected} s`);
        assert.equal(at('gex_workers_busy'), 0, 'no worker pool here');
        assert.equal(at('gex_workers_idle'), 0);

        assert.equal(at('gex_notifications_sent_total', { channel: 'webhook' }), 3);
        assert.equal(at('gex_notifications_sent_total', { channel: 'email' }), 0);
        assert.equal(at('gex_notifications_retry_attempts_total', { channel: 'webhook' }), 1);
        assert.equal(at('gex_notifications_failed_total', { channel: 'email' }), 1);
        assert.equal(at('gex_notifications_failed_total', { channel: 'webhook' }), 0);
        assert.equal(at('gex_notifications_retrying'), 1, 'the 500 is tried again later');
        assert.equal(at('gex_schedules_fired_total'), 0);
        assert.equal(at('gex_schedules_missed_total'), 0);
        assert.equal(at('gex_queue_metrics_read_errors_total'), 0);

        if (factory.name !== 'PostgreSQL') return;
        // another process on the same database: the same queue, none of the first one's counts
        const backend = await openEmbeddedStore(opened.location, TEST_KEY);
        closing.push(() => backend.close());
        const otherRegistry = new Registry();
        platforms.unshift(await JobPlatform.open(backend, { logger: capture.logger, metrics: otherRegistry }));
        const other = (await scrape(otherRegistry)).samples;
        assert.equal(figure(other, 'gex_jobs_waiting'), 2);
        assert.equal(figure(other, 'gex_jobs_processing'), 1);
        assert.equal(figure(other, 'gex_notifications_retrying'), 1);
        assert.ok(Math.abs(figure(other, 'gex_jobs_oldest_waiting_age_seconds')! - age) < 5);
        assert.deepEqual(
          other.filter((s) => s.name === 'gex_jobs_finished_total'),
          [],
          'its counters count its own ends: it committed none',
        );
      });

      it("a flow: its job and its tasks are counted, its phases are not; a killed flow's running task counts as terminated", async () => {
        const registry = new Registry();
        const metrics = new JobPlatformMetrics(registry, {
          queue: () => readQueueFigures(opened.backend.db),
          workers: () => ({ busy: 0, idle: 0 }),
        });
        const jobs = new JobRepository(opened.backend.db, { onJobsEnded: (ends) => metrics.jobsEnded(ends) });
        const flow = (phases: number) =>
          runRequest(token, 'flow', {
            componentId: 'keboola.orchestrator',
            flow: {
              definition: decodeJson(
                JSON.stringify({
                  phases: Array.from({ length: phases }, (_, i) => ({
                    id: i + 1,
                    name: `P${i + 1}`,
                    ...(i > 0 ? { dependsOn: [i] } : {}),
                  })),
                  tasks: Array.from({ length: phases }, (_, i) => ({
                    id: String(i + 1),
                    name: `t${i + 1}`,
                    phase: i + 1,
                    task: { componentId: 'ex-generic-v2', configId: `c${i + 1}`, mode: 'run' },
                  })),
                }),
              ),
              onlyTaskIds: null,
            },
          });
        const done = await jobs.create(flow(2));
        for (let i = 0; i < 2; i++) {
          const task = await jobs.claimNext('w1');
          assert.ok(task, 'a task to run');
          await jobs.finish(task.id, () => ({ status: 'success', result: ok }));
        }
        assert.equal((await jobs.get(null, done.id))?.status, 'success');
        // a second flow killed while its first task runs: that task is terminating, the second one never made
        const killed = await jobs.create(flow(2));
        const running = (await jobs.claimNext('w1'))!;
        await jobs.kill(token.projectId, killed.id);
        await jobs.finish(running.id, (current) => ({
          status: current === 'terminating' ? 'terminated' : 'error',
          result: ok,
        }));
        assert.equal((await jobs.get(null, killed.id))?.status, 'terminated');
        const { samples } = await scrape(registry);
        const finished = (component: string, status: string) =>
          figure(samples, 'gex_jobs_finished_total', { component, status });
        assert.equal(finished('keboola.orchestrator', 'success'), 1);
        assert.equal(finished('ex-generic-v2', 'success'), 2);
        assert.equal(finished('ex-generic-v2', 'terminated'), 1);
        assert.equal(finished('keboola.orchestrator', 'terminated'), 1);
        assert.equal(
          samples.filter((s) => s.name === 'gex_jobs_finished_total').reduce((n, s) => n + s.value, 0),
          5,
          'two flows and three tasks: no phase',
        );
        assert.equal(figure(samples, 'gex_jobs_waiting'), 0);
        assert.equal(figure(samples, 'gex_jobs_processing'), 0, "no flow's own job counted as running");
      });

      it('schedule ticks fired and missed, counted by the ticker that saw them', async () => {
        const store = opened.backend.session(token);
        await store.createConfiguration(GENERIC_EXTRACTOR_ID, {
          name: 'Shop',
          configurationId: 'shop',
          configuration: fromPlain({ parameters: { api: { baseUrl: 'http://127.0.0.1:9/' }, config: { jobs: [] } } }),
        });
        const config = await store.createConfiguration(SCHEDULER_COMPONENT_ID, {
          name: 'every two seconds',
          configuration: fromPlain({
            schedule: { cronTab: '*/2 * * * * *', timezone: 'UTC', state: 'enabled' },
            target: { componentId: GENERIC_EXTRACTOR_ID, configurationId: 'shop' },
          }),
        });
        const schedules = new ScheduleRepository(opened.backend.db);
        await activateSchedule(store, token, schedules, config.id);
        const registry = new Registry();
        const platform = await JobPlatform.open(opened.backend, {
          logger: captureLogger('info').logger,
          metrics: registry,
        });
        platforms.push(platform);
        const metrics = platform.metrics!;
        let clock = new Date('2030-01-01T00:00:00.300Z');
        const ticker = new ScheduleTicker({
          schedules,
          jobs: platform.served.queue,
          token: (id) => opened.backend.tokenById(id),
          storeOf: (t) => opened.backend.session(t),
          logger: captureLogger('info').logger,
          now: () => clock,
          onFired: () => metrics.scheduleFired(),
          onMissed: (ticks) => metrics.schedulesMissed(ticks),
        });
        await ticker.check();
        // the years from its activation to 2030 fell while no ticker ran: more than 10, counted as 11
        let { samples } = await scrape(registry);
        assert.equal(figure(samples, 'gex_schedules_fired_total'), 1);
        assert.equal(figure(samples, 'gex_schedules_missed_total'), 11);
        // nothing ran for 20 s: the tick at 00:20 is fired, the nine between were missed
        clock = new Date('2030-01-01T00:00:20.400Z');
        await ticker.check();
        await ticker.stop();
        ({ samples } = await scrape(registry));
        assert.equal(figure(samples, 'gex_schedules_fired_total'), 2);
        assert.equal(figure(samples, 'gex_schedules_missed_total'), 20);
      });
    });
  }

  describe('bounds', () => {
    const figures: QueueFigures = { waiting: 0, processing: 0, oldestWaitingSeconds: 0, notificationsRetrying: 0 };

    it('a flood of hostile component ids: at most 100 plain ids, then `other`; odd ones `invalid`', async () => {
      const registry = new Registry();
      const metrics = new JobPlatformMetrics(registry, {
        queue: () => Promise.resolve(figures),
        workers: () => ({ busy: 1, idle: 3 }),
      });
      const hostile = [
        '',
        'other',
        'a'.repeat(65),
        'x"} 1\n',
        'ex\\generic',
        '../../etc',
        'comp onent',
        'ünïcode',
        '\u0000',
        '-leading-dash',
      ];
      const ends = [
        ...hostile,
        ...Array.from({ length: 5000 }, (_, i) => `keboola.ex-${i}`),
        'keboola.ex-0', // known already: its own series
      ].map((componentId) => ({ componentId, status: 'success' as const, durationSeconds: 1 }));
      metrics.jobsEnded(ends);
      const { text, samples } = await scrape(registry);
      const finished = samples.filter((s) => s.name === 'gex_jobs_finished_total');
      const components = new Set(finished.map((s) => s.labels.component));
      assert.equal(components.size, COMPONENT_LABEL_LIMIT + 2, 'the first 100 ids, other, invalid');
      for (const c of components) assert.match(c, /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/);
      assert.equal(figure(samples, 'gex_jobs_finished_total', { component: 'invalid', status: 'success' }), 10);
      assert.equal(figure(samples, 'gex_jobs_finished_total', { component: 'other', status: 'success' }), 4900);
      assert.equal(figure(samples, 'gex_jobs_finished_total', { component: 'keboola.ex-0', status: 'success' }), 2);
      assert.equal(
        finished.reduce((sum, s) => sum + s.value, 0),
        ends.length,
        'every end counted once',
      );
      assert.ok(text.length < 100_000, `the exposition stays small: ${text.length} bytes`);
      assert.equal(figure(samples, 'gex_workers_busy'), 1);
      assert.equal(figure(samples, 'gex_workers_idle'), 3);
    });

    it('a database that cannot be read: the scrape answers, the queue figures NaN, the failure counted', async () => {
      const registry = new Registry();
      const problems: string[] = [];
      const metrics = new JobPlatformMetrics(
        registry,
        {
          queue: () => Promise.reject(new Error('connection refused')),
          workers: () => ({ busy: 0, idle: 1 }),
        },
        (error) => problems.push(error.message),
      );
      metrics.scheduleFired();
      const { samples } = await scrape(registry);
      // NaN, not 0: an alert on a backlog neither fires nor clears on a figure not read
      assert.ok(Number.isNaN(figure(samples, 'gex_jobs_waiting')));
      assert.ok(Number.isNaN(figure(samples, 'gex_jobs_oldest_waiting_age_seconds')));
      assert.ok(Number.isNaN(figure(samples, 'gex_notifications_retrying')));
      assert.equal(figure(samples, 'gex_queue_metrics_read_errors_total'), 1, 'one read for the whole scrape');
      assert.equal(figure(samples, 'gex_schedules_fired_total'), 1, 'the counters are still there');
      assert.deepEqual(problems, ['connection refused']);
    });
  });
});
