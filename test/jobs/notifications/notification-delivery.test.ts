import assert from 'node:assert/strict';
import { JobRepository } from '../../../src/jobs/job-repository.js';
import { SUBSCRIPTION_SECRETS } from '../../../src/jobs/job-queue.js';
import {
  DELIVERY_LEASE_MS,
  NotificationOutbox,
  RETRY_FOR_MS,
  retryDelayMs,
} from '../../../src/jobs/notifications/notification-outbox.js';
import { NotificationSender } from '../../../src/jobs/notifications/notification-sender.js';
import { subscriptionInput } from '../../../src/jobs/notifications/subscription-input.js';
import { SubscriptionRepository } from '../../../src/jobs/notifications/subscription-repository.js';
import { fromPlain } from '../../../src/json/index.js';
import type { TokenInfo } from '../../../src/store/types.js';
import { captureLogger } from '../../support/extraction.js';
import { runRequest } from '../../support/flow-setup.js';
import { storeBackends } from '../../support/store.js';
import { signatureHolds, startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const ok = { message: 'done', configVersion: '1', output: { tables: [] } };
const failed = {
  message: 'The API answered 500',
  configVersion: '1',
  output: { tables: [] },
  error: { type: 'user' as const, message: 'The API answered 500' },
};

/** The outbox written with the job's end and delivered to a real webhook receiver. */
describe('notifications: the outbox and webhook delivery', function () {
  this.timeout(60_000);

  for (const factory of storeBackends()) {
    describe(factory.name, () => {
      let opened: Awaited<ReturnType<typeof factory.open>>;
      let jobs: JobRepository;
      let subscriptions: SubscriptionRepository;
      let outbox: NotificationOutbox;
      let receiver: WebhookReceiver;
      let token: TokenInfo;
      let clock: number;
      let capture: ReturnType<typeof captureLogger>;
      const senders: NotificationSender[] = [];

      const sender = (more: Partial<ConstructorParameters<typeof NotificationSender>[0]> = {}) => {
        const made = new NotificationSender({
          outbox,
          subscriptions,
          logger: capture.logger,
          publicUrl: 'https://gex.example.com',
          now: () => new Date(clock),
          pollMs: 60_000,
          ...more,
        });
        senders.push(made);
        return made;
      };
      /** one look at the outbox and every attempt it started, finished */
      const round = async (s: NotificationSender) => {
        s.wake();
        // the look and its attempts end on their own: wait for the attempts recorded
        await s.settled();
      };
      const subscribe = async (event: string, filters: unknown[] = [], url = `${receiver.url}/hook?token=s3cret`) =>
        subscriptions.create(
          token.projectId,
          subscriptionInput(fromPlain({ event, filters, recipient: { channel: 'webhook', url } })),
        );
      const endJob = async (config: string, result: typeof ok | typeof failed, status: 'success' | 'error') => {
        const job = await jobs.create(runRequest(token, config));
        await jobs.claim(job.id, 'w1', new Date(clock - 5000));
        await jobs.finish(job.id, () => ({ status, result }), new Date(clock));
        return job;
      };

      beforeEach(async () => {
        opened = await factory.open();
        token = (await opened.backend.createToken({ description: 'ci' })).info;
        jobs = new JobRepository(opened.backend.db);
        subscriptions = new SubscriptionRepository(
          opened.backend.db,
          opened.backend.projectSecrets(SUBSCRIPTION_SECRETS),
        );
        outbox = new NotificationOutbox(opened.backend.db);
        receiver = await startWebhookReceiver();
        clock = Date.parse('2026-12-02T10:00:00Z');
        capture = captureLogger('info');
      });
      afterEach(async () => {
        for (const s of senders.splice(0)) await s.stop();
        await receiver.close();
        await opened.dispose();
      });

      it('writes an event with the job end that causes it, for the subscriptions whose filters match', async () => {
        const all = await subscribe('job-failed');
        const onA = await subscribe('job-failed', [{ field: 'job.configuration.id', value: 'a' }]);
        await subscribe('job-failed', [{ field: 'job.configuration.id', value: 'b' }]);
        await subscribe('job-succeeded');
        const job = await endJob('a', failed, 'error');
        const rows = await opened.backend.db.all<Record<string, unknown>>(
          'SELECT subscription_id, event, job_id, status, payload FROM notification_events ORDER BY subscription_id',
        );
        assert.deepEqual(
          rows.map((r) => [Number(r.subscription_id), r.event, Number(r.job_id), r.status]),
          [
            [all.subscription.id, 'job-failed', job.id, 'pending'],
            [onA.subscription.id, 'job-failed', job.id, 'pending'],
          ],
        );
        const payload = JSON.parse(String(rows[0].payload));
        assert.equal(payload.eventType, 'job-failed');
        assert.equal(payload.job.id, String(job.id));
        assert.equal(payload.job.status, 'error');
        assert.equal(payload.job.durationSeconds, 5);
        assert.equal(payload.job.message, 'The API answered 500');
        assert.deepEqual(payload.job.configuration, { id: 'a', name: 'a' });
        assert.deepEqual(payload.project, { id: String(token.projectId), name: 'default' });
        assert.equal(JSON.stringify(payload).includes('s3cret'), false, 'no secret in the outbox');
      });

      it('writes nothing when the job end is rolled back, and nothing for a kill', async () => {
        await subscribe('job-failed');
        const job = await jobs.create(runRequest(token, 'a'));
        await jobs.claim(job.id, 'w1');
        await assert.rejects(
          jobs.finish(job.id, () => {
            throw new Error('the outcome could not be decided');
          }),
        );
        const pending = await jobs.create(runRequest(token, 'b'));
        await jobs.kill(token.projectId, pending.id);
        const count = await opened.backend.db.get<Record<string, unknown>>(
          'SELECT COUNT(*) AS n FROM notification_events',
        );
        assert.equal(Number(count?.n), 0);
      });

      it('POSTs the payload signed, with its delivery id, and records the attempt', async () => {
        const made = await subscribe('job-succeeded');
        const job = await endJob('a', ok, 'success');
        await round(sender());
        assert.equal(receiver.received.length, 1);
        const hook = receiver.received[0];
        assert.equal(hook.path, '/hook?token=s3cret');
        assert.ok(signatureHolds(made.signingSecret!, hook.body, hook.headers['x-gex-signature']), 'signature holds');
        assert.equal(signatureHolds('another secret', hook.body, hook.headers['x-gex-signature']), false);
        assert.equal(hook.headers['x-gex-event'], 'job-succeeded');
        assert.equal(hook.headers['content-type'], 'application/json');
        const body = JSON.parse(hook.body);
        assert.equal(body.job.url, `https://gex.example.com/console/jobs/${job.id}`);
        assert.equal(body.eventType, 'job-succeeded');
        assert.equal(hook.headers['x-gex-delivery-id'], body.eventId);
        const [record] = await outbox.deliveries(token.projectId);
        assert.equal(record.status, 'delivered');
        assert.equal(record.deliveryId, body.eventId);
        assert.deepEqual(
          record.attempts.map((a) => [a.attempt, a.outcome, a.statusCode]),
          [[1, 'delivered', 200]],
        );
        await round(sender());
        assert.equal(receiver.received.length, 1, 'a delivered event is not sent again');
      });

      it('retries a 5xx, a timeout and a dropped connection with backoff, the same delivery id each time', async () => {
        await subscribe('job-failed');
        await endJob('a', failed, 'error');
        const answers: Array<'hang' | number> = [503, 'hang', 200];
        receiver.answer = (_r, n) => answers[n];
        const s = sender({ webhookTimeoutMs: 300 });
        await round(s);
        const [afterFirst] = await outbox.deliveries(token.projectId);
        assert.equal(afterFirst.status, 'pending');
        const wait = Date.parse(afterFirst.nextAttempt!) - clock;
        assert.ok(wait >= 8000 && wait <= 12_000, `first retry in 10 s ± 20 %, not ${wait} ms`);
        await round(s);
        assert.equal(receiver.received.length, 1, 'not due yet: not sent');
        clock += 12_001;
        await round(s);
        clock += 24_001;
        await round(s);
        const [record] = await outbox.deliveries(token.projectId);
        assert.equal(record.status, 'delivered');
        assert.deepEqual(
          record.attempts.map((a) => [a.attempt, a.outcome, a.statusCode]),
          [
            [1, 'retry', 503],
            [2, 'retry', null],
            [3, 'delivered', 200],
          ],
        );
        assert.match(record.attempts[1].message, /no answer in time/);
        assert.deepEqual([...receiver.repeats().values()], [3], 'one delivery id on all three attempts');
        assert.deepEqual(
          receiver.received.map((r) => r.headers['x-gex-attempt']),
          ['1', '2', '3'],
        );
      });

      it('a 4xx is final; a redirect is not followed and is final; messages name only the origin', async () => {
        const target = await startWebhookReceiver();
        try {
          await subscribe('job-failed', [{ field: 'job.configuration.id', value: 'a' }]);
          await subscribe(
            'job-failed',
            [{ field: 'job.configuration.id', value: 'b' }],
            `${receiver.url}/r?key=s3cret`,
          );
          receiver.answer = (r) => (r.path.startsWith('/r') ? { redirect: `${target.url}/elsewhere` } : 410);
          await endJob('a', failed, 'error');
          await endJob('b', failed, 'error');
          const s = sender();
          await round(s);
          clock += 3600_000;
          await round(s);
          assert.equal(receiver.received.length, 2, 'each tried once');
          assert.equal(target.received.length, 0, 'the redirect was not followed');
          const records = await outbox.deliveries(token.projectId);
          assert.deepEqual(
            records.map((r) => [r.status, r.attempts.map((a) => [a.outcome, a.statusCode])]),
            [
              ['failed', [['final', 302]]],
              ['failed', [['final', 410]]],
            ],
          );
          assert.match(records[0].attempts[0].message, /redirect, not followed/);
          const text = JSON.stringify(records) + capture.text();
          assert.equal(text.includes('s3cret'), false, 'no secret of the URL in a record or a log line');
          assert.match(capture.text(), /failed: http:\/\/127\.0\.0\.1:\d+: HTTP 410/);
        } finally {
          await target.close();
        }
      });

      it('cuts an endless answer: the attempt ends delivered within about a second', async () => {
        await subscribe('job-succeeded');
        receiver.answer = () => 'endless';
        await endJob('a', ok, 'success');
        const started = Date.now();
        await round(sender());
        assert.ok(Date.now() - started < 5000, 'did not read the endless body');
        const [record] = await outbox.deliveries(token.projectId);
        assert.equal(record.status, 'delivered');
      });

      it('gives up after 24 hours of retries, saying so', async () => {
        await subscribe('job-failed');
        await endJob('a', failed, 'error');
        receiver.answer = () => 500;
        const s = sender();
        for (let i = 0; i < 40; i++) {
          await round(s);
          clock += 3600_000 * 1.3;
          const [r] = await outbox.deliveries(token.projectId);
          if (r.status !== 'pending') break;
        }
        const [record] = await outbox.deliveries(token.projectId);
        assert.equal(record.status, 'failed');
        assert.match(record.attempts.at(-1)!.message, /retried for 24 hours: given up/);
        const lastAttempt = Date.parse(record.attempts.at(-1)!.started);
        assert.ok(lastAttempt - Date.parse(record.created) <= RETRY_FOR_MS);
        assert.ok(record.attempts.length >= 10 && record.attempts.length <= 40, String(record.attempts.length));
      });

      it('an event whose subscription was deleted fails, saying so; one taken by a sender that died is taken again after its lease', async () => {
        const gone = await subscribe('job-failed', [{ field: 'job.configuration.id', value: 'a' }]);
        await subscribe('job-failed', [{ field: 'job.configuration.id', value: 'b' }]);
        await endJob('a', failed, 'error');
        await endJob('b', failed, 'error');
        await subscriptions.remove(token.projectId, gone.subscription.id);
        // a sender took b's event and died before it recorded anything
        const taken = await outbox.take(10, new Date(clock));
        assert.equal(taken.length, 2);
        const s = sender();
        await round(s);
        assert.equal(receiver.received.length, 0, 'leased: nobody sends it meanwhile');
        clock += DELIVERY_LEASE_MS + 1;
        await round(s);
        const records = await outbox.deliveries(token.projectId);
        assert.deepEqual(
          records.map((r) => [r.status, r.attempts.map((a) => a.attempt)]),
          [
            ['delivered', [2]],
            ['failed', [2]],
          ],
        );
        assert.match(records[1].attempts[0].message, /subscription was deleted/);
        assert.equal(receiver.received.length, 1);
      });

      it('drains a backlog larger than its concurrency at once, not one batch per poll', async () => {
        await subscribe('job-succeeded');
        for (let i = 0; i < 7; i++) await endJob(`c${i}`, ok, 'success');
        // told once, its poll an hour away: the slots freed are filled again until nothing is due
        await round(sender({ concurrency: 2, pollMs: 3600_000 }));
        assert.equal(receiver.received.length, 7);
        assert.deepEqual([...new Set(receiver.repeats().values())], [1], 'each once');
        const records = await outbox.deliveries(token.projectId);
        assert.deepEqual(
          records.map((r) => r.status),
          Array(7).fill('delivered'),
        );
      });

      it('sends a sample now to a subscription (not recorded)', async () => {
        const made = await subscribe('job-failed');
        const outcome = await sender().sendSample(token.projectId, made.subscription.id);
        assert.deepEqual(outcome?.outcome, 'delivered');
        const body = JSON.parse(receiver.received[0].body);
        assert.equal(body.eventType, 'job-failed');
        assert.match(body.job.message, /test notification/);
        assert.ok(
          signatureHolds(
            made.signingSecret!,
            receiver.received[0].body,
            receiver.received[0].headers['x-gex-signature'],
          ),
        );
        assert.deepEqual(await outbox.deliveries(token.projectId), []);
        assert.equal(await sender().sendSample(token.projectId, 999), undefined);
      });
    });
  }

  it('backs off from 10 s doubling to an hour, ±20 %', () => {
    assert.equal(
      retryDelayMs(1, () => 0.5),
      10_000,
    );
    assert.equal(
      retryDelayMs(2, () => 0.5),
      20_000,
    );
    assert.equal(
      retryDelayMs(3, () => 0),
      32_000,
    );
    assert.equal(
      retryDelayMs(30, () => 0.5),
      3600_000,
    );
    assert.equal(
      retryDelayMs(30, () => 1),
      4320_000,
    );
  });
});
