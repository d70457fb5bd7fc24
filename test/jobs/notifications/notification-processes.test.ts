import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SUBSCRIPTION_SECRETS } from '../../../src/jobs/job-queue.js';
import type { QueueJob } from '../../../src/jobs/job-record.js';
import {
  DELIVERY_LEASE_MS,
  enqueueEvents,
  NotificationOutbox,
} from '../../../src/jobs/notifications/notification-outbox.js';
import { NotificationSender } from '../../../src/jobs/notifications/notification-sender.js';
import { subscriptionInput } from '../../../src/jobs/notifications/subscription-input.js';
import { SubscriptionRepository } from '../../../src/jobs/notifications/subscription-repository.js';
import { fromPlain } from '../../../src/json/index.js';
import { runGex, startServe } from '../../support/cli.js';
import { captureLogger } from '../../support/extraction.js';
import { tagConfigs } from '../../support/flow-setup.js';
import { openEmbeddedStore } from '../../support/open-store.js';
import { call, startWorker, untilFinished, type Json } from '../../support/queue.js';
import { smtpSinkMissing, startSmtpSink, type SmtpSink } from '../../support/smtp-server.js';
import { postgresBackend, TEST_KEY } from '../../support/store.js';
import { signatureHolds, startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

/** An API that answers every request 404 (not retried): a job of a configuration reading it fails. */
async function failingApi(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"down"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(50);
  }
}

/** Real processes deliver: gex serve after a real job's failure, a serve killed -9 mid-retry, three workers on PostgreSQL. */
describe('notifications: delivery by real processes', function () {
  this.timeout(120_000);
  let dir: string;
  let receiver: WebhookReceiver;
  const children: ChildProcess[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-notify-'));
    receiver = await startWebhookReceiver();
  });
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
  });

  const tokenFor = async (store: string) => {
    const r = await runGex(['tokens', 'create', '--description', 'ci', '--store', store], TEST_KEY);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.trim();
  };

  it('gex serve: a job that fails is told to a webhook (signed) and by e-mail through a real SMTP relay', async function () {
    const missing = await smtpSinkMissing();
    let sink: SmtpSink | undefined;
    if (missing) console.warn(`\n  !!! the e-mail half of this test is SKIPPED: ${missing}\n`);
    else sink = await startSmtpSink({ dir: await mkdtemp(path.join(dir, 'mail-')) });
    const api = await failingApi();
    try {
      const store = path.join(dir, 'store.sqlite');
      const token = await tokenFor(store);
      const served = await startServe(['--store', store, '--workers', '1'], {
        ...TEST_KEY,
        ...(sink ? { GEX_SMTP_URL: `smtp://127.0.0.1:${sink.port}`, GEX_SMTP_FROM: 'gex@example.com' } : {}),
      });
      children.push(served.child);
      const { a } = await tagConfigs(served.url, token, api.url, ['a'], 'in.c-notify');
      const hook = await call(served.url, token, 'POST', '/project-subscriptions', {
        event: 'job-failed',
        filters: [{ field: 'job.configuration.id', value: a }],
        recipient: { channel: 'webhook', url: `${receiver.url}/gex?token=q-s3cret` },
      });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      if (sink)
        assert.equal(
          (
            await call(served.url, token, 'POST', '/project-subscriptions', {
              event: 'job-failed',
              recipient: { channel: 'email', address: 'ops@example.com' },
            })
          ).status,
          201,
        );
      const job = (await call(served.url, token, 'POST', '/jobs', { component: 'ex-generic-v2', config: a })).body;
      const ended = await untilFinished(served.url, token, String(job.id), 60_000);
      assert.equal(ended.status, 'error');
      await receiver.until(1);
      const body = receiver.received[0].body;
      assert.ok(signatureHolds(String(hook.body.signingSecret), body, receiver.received[0].headers['x-gex-signature']));
      const payload = JSON.parse(body) as Json;
      assert.equal(payload.job.id, String(job.id));
      assert.equal(payload.job.url, `${served.url}/console/jobs/${job.id}`);
      assert.match(payload.job.message, /404/);
      const deliveries = await until('the webhook recorded', async () => {
        const list = (await call(served.url, token, 'GET', '/notification-deliveries')).body as Json[];
        return list.filter((d) => d.status === 'delivered').length === (sink ? 2 : 1) ? list : undefined;
      });
      assert.ok(deliveries.every((d) => d.jobId === String(job.id)));
      if (sink) {
        const [mail] = await until('the e-mail', async () => {
          const got = await sink.messages();
          return got.length ? got : undefined;
        });
        assert.deepEqual(mail.rcptTos, ['ops@example.com']);
        assert.match(mail.text ?? '', new RegExp(`Job:\\s+${job.id}`));
        assert.match(mail.text ?? '', /Status:\s+error/);
        assert.ok((mail.text ?? '').includes(`${served.url}/console/jobs/${job.id}`));
      }
      assert.equal(served.output().includes('q-s3cret'), false, "the URL's secret is in no log line");
    } finally {
      await api.close();
      await sink?.stop();
    }
  });

  it('gex serve killed -9 mid-retry: the next sender delivers it, one extra delivery at most, nothing lost', async () => {
    const store = path.join(dir, 'store.sqlite');
    const token = await tokenFor(store);
    const answers: Array<number | 'hang'> = [503, 'hang', 200];
    receiver.answer = (_r, n) => answers[n] ?? 200;
    const served = await startServe(['--store', store, '--workers', '0'], TEST_KEY);
    children.push(served.child);
    const made = await call(served.url, token, 'POST', '/project-subscriptions', {
      event: 'job-failed',
      recipient: { channel: 'webhook', url: `${receiver.url}/gex` },
    });
    const backend = await openEmbeddedStore(store, TEST_KEY);
    try {
      const projectId = Number(
        (await backend.db.get<Json>('SELECT project_id FROM notification_subscriptions'))!.project_id,
      );
      const job = {
        id: 4242,
        type: 'standard',
        projectId,
        projectName: 'default',
        componentId: 'ex-generic-v2',
        configId: 'a',
        branchId: '1',
        status: 'error',
        started: null,
        ended: new Date().toISOString(),
        durationSeconds: 3,
        result: null,
        configData: null,
      } as unknown as QueueJob;
      await backend.db.transaction((tx) => enqueueEvents(tx, job, 'job-failed', new Date()));
      await receiver.until(1);
      // the first attempt (503) recorded; the backoff is made to end now, then the second hangs
      await until('the first attempt recorded', async () =>
        (await backend.db.get<Json>("SELECT 1 AS x FROM notification_attempts WHERE outcome = 'retry'"))
          ? true
          : undefined,
      );
      await backend.db.run('UPDATE notification_events SET next_attempt = ?', [new Date().toISOString()]);
      await receiver.until(2);
      served.child.kill('SIGKILL');
      await new Promise((resolve) => served.child.once('exit', resolve));
      // the next process to deliver, once the lease of the dead one ended
      const sender = new NotificationSender({
        outbox: new NotificationOutbox(backend.db),
        subscriptions: new SubscriptionRepository(backend.db, backend.projectSecrets(SUBSCRIPTION_SECRETS)),
        logger: captureLogger('info').logger,
        now: () => new Date(Date.now() + DELIVERY_LEASE_MS + 1000),
        pollMs: 60_000,
      });
      sender.wake();
      await sender.settled();
      await sender.stop();
      const [record] = await new NotificationOutbox(backend.db).deliveries(projectId);
      assert.equal(record.status, 'delivered');
      assert.deepEqual(
        record.attempts.map((a) => [a.attempt, a.outcome, a.statusCode]),
        [
          [1, 'retry', 503],
          [3, 'delivered', 200],
        ],
        'the attempt the killed process had in flight is not recorded; nothing else is lost',
      );
      assert.equal(receiver.received.length, 3);
      assert.deepEqual([...receiver.repeats().values()], [3], 'one delivery id on every attempt');
      assert.ok(
        signatureHolds(
          String(made.body.signingSecret),
          receiver.received[2].body,
          receiver.received[2].headers['x-gex-signature'],
        ),
      );
    } finally {
      await backend.close();
    }
  });

  it('three gex workers on PostgreSQL deliver one outbox: each event once, whichever delivers', async function () {
    const factory = postgresBackend();
    if (!factory) {
      console.warn('\n  !!! SKIPPED: three workers on PostgreSQL need GEX_TEST_POSTGRES\n');
      return this.skip();
    }
    const fresh = await factory.fresh();
    const backend = await openEmbeddedStore(fresh.location, TEST_KEY);
    const EVENTS = 300;
    try {
      const token = (await backend.createToken({ description: 'ci' })).info;
      const subscriptions = new SubscriptionRepository(backend.db, backend.projectSecrets(SUBSCRIPTION_SECRETS));
      for (const name of ['a', 'b', 'c'])
        await subscriptions.create(
          token.projectId,
          subscriptionInput(
            fromPlain({ event: 'job-failed', recipient: { channel: 'webhook', url: `${receiver.url}/${name}` } }),
          ),
        );
      receiver.answer = () => 200;
      const workers = await Promise.all([0, 1, 2].map(() => startWorker(fresh.location, TEST_KEY)));
      children.push(...workers.map((w) => w.child));
      // 100 job ends with 3 subscriptions each, written while the workers poll
      for (let i = 1; i <= EVENTS / 3; i++) {
        const job = {
          id: i,
          type: 'standard',
          projectId: token.projectId,
          projectName: 'default',
          componentId: 'ex-generic-v2',
          configId: `c${i}`,
          branchId: '1',
          status: 'error',
          started: null,
          ended: new Date().toISOString(),
          durationSeconds: 1,
          result: null,
          configData: null,
        } as unknown as QueueJob;
        await backend.db.transaction((tx) => enqueueEvents(tx, job, 'job-failed', new Date()));
      }
      await receiver.until(EVENTS);
      await until('every attempt recorded', async () => {
        const row = await backend.db.get<Json>(
          "SELECT COUNT(*) AS n FROM notification_events WHERE status = 'delivered'",
        );
        return Number(row?.n) === EVENTS ? true : undefined;
      });
      await sleep(1500);
      const repeats = [...receiver.repeats().values()];
      assert.equal(repeats.length, EVENTS, 'every event arrived');
      assert.equal(receiver.received.length, EVENTS, 'none twice');
      const senders = await backend.db.all<Json>('SELECT DISTINCT sender FROM notification_attempts');
      assert.ok(senders.length >= 2, `delivered by more than one process (${senders.length})`);
    } finally {
      await backend.close();
      await fresh.dispose();
    }
  });
});
