import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EmailSender } from '../../../src/jobs/notifications/email-sender.js';
import type { AttemptOutcome, NotificationPayload } from '../../../src/jobs/notifications/notification-payload.js';
import { parseSmtpSettings } from '../../../src/jobs/notifications/smtp-settings.js';
import {
  selfSignedCertificate,
  smtpSinkMissing,
  startSilentServer,
  startSmtpSink,
  type SmtpSink,
  type SmtpSinkOptions,
} from '../../support/smtp-server.js';
import { closedPort } from '../../support/tcp-proxy.js';

const FROM = 'gex@example.com';
const TO = 'ops@example.com';
const PASSWORD = 'Pa55-w0rd-7f3a';

function payload(
  job: Partial<NotificationPayload['job']> = {},
  more: Partial<NotificationPayload> = {},
): NotificationPayload {
  return {
    eventType: 'job-failed',
    eventId: 'job-123-job-failed',
    job: {
      id: '123',
      url: 'https://gex.example.com/console/jobs/123',
      status: 'error',
      startTime: '2026-03-04T05:06:07+00:00',
      endTime: '2026-03-04T05:07:12+00:00',
      durationSeconds: 65,
      component: { id: 'keboola.ex-generic-v2', name: 'Generic Extractor' },
      configuration: { id: '456', name: 'Orders API' },
      message: 'The API request failed: [500] Internal Server Error (GET https://api.example.com/orders)',
      tasks: [],
      ...job,
    },
    branch: { id: '7' },
    project: { id: '1', name: 'Main project' },
    ...more,
  };
}

const header = (headers: Array<[string, string]>, name: string) =>
  headers.filter(([key]) => key.toLowerCase() === name.toLowerCase()).map(([, value]) => value);

describe('e-mail notifications through a real SMTP server (aiosmtpd)', function () {
  let dir: string;
  let certificate: { cert: string; key: string; pem: string };
  let sink: SmtpSink | undefined;
  let sender: EmailSender | undefined;
  let count = 0;

  before(async function () {
    const missing = await smtpSinkMissing();
    if (missing) {
      console.warn(`\n  !!! SKIPPED: the e-mail sender's SMTP tests: ${missing}\n`);
      this.skip();
    }
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-smtp-'));
    certificate = await selfSignedCertificate(dir);
  });
  after(() => dir && rm(dir, { recursive: true, force: true }));
  afterEach(async () => {
    await sender?.close();
    await sink?.stop();
    sender = sink = undefined;
  });

  async function sinkWith(options: Omit<SmtpSinkOptions, 'dir'> = {}): Promise<SmtpSink> {
    const folder = path.join(dir, `sink-${++count}`);
    await mkdir(folder);
    sink = await startSmtpSink({ dir: folder, ...options });
    return sink;
  }

  function senderFor(url: string, options: { ca?: string; timeoutMs?: number } = {}): EmailSender {
    sender = new EmailSender(parseSmtpSettings({ url, from: FROM }), { timeoutMs: 5_000, ...options });
    return sender;
  }

  it('delivers a plain-text message naming the job, configuration, status, duration, error and page', async () => {
    const server = await sinkWith();
    const outcome = await senderFor(`smtp://127.0.0.1:${server.port}`).send(TO, payload());
    assert.equal(outcome.outcome, 'delivered');
    assert.equal(outcome.statusCode, 250);
    assert.match(outcome.message, /^accepted: 250 2\.0\.0 OK queued as 1$/);

    const [message, ...others] = await server.messages();
    assert.equal(others.length, 0);
    assert.equal(message.mailFrom, FROM);
    assert.deepEqual(message.rcptTos, [TO]);
    assert.equal(message.subject, 'gex: job 123 failed — Generic Extractor/Orders API');
    assert.deepEqual(message.contentTypes, ['text/plain']);
    assert.equal(message.tls, false);
    const lines = message.text!.split('\n');
    for (const line of [
      'Job 123 failed.',
      'Job:            123',
      'Status:         error',
      'Component:      Generic Extractor (keboola.ex-generic-v2)',
      'Configuration:  Orders API (456)',
      'Project:        Main project (1)',
      'Branch:         7',
      'Started:        2026-03-04T05:06:07+00:00',
      'Ended:          2026-03-04T05:07:12+00:00',
      'Duration:       1 min 5 s (65 s)',
      'Error:',
      '  The API request failed: [500] Internal Server Error (GET https://api.example.com/orders)',
      'Job page: https://gex.example.com/console/jobs/123',
    ])
      assert.ok(lines.includes(line), `no line ${JSON.stringify(line)} in:\n${message.text}`);

    const token = createHash('sha256').update('job-123-job-failed').digest('hex').slice(0, 32);
    assert.deepEqual(header(message.headers, 'Message-ID'), [`<gex-${token}@example.com>`]);
    assert.deepEqual(header(message.headers, 'X-Gex-Event-Id'), ['job-123-job-failed']);
    assert.deepEqual(header(message.headers, 'Auto-Submitted'), ['auto-generated']);
    assert.deepEqual(header(message.headers, 'From'), ['gex <gex@example.com>']);
  });

  it('sends a repeat of an event with the same Message-ID, another event with another', async () => {
    const server = await sinkWith();
    const mail = senderFor(`smtp://127.0.0.1:${server.port}`);
    for (const eventId of ['e-1', 'e-1', 'e-2'])
      assert.equal((await mail.send(TO, payload({}, { eventId }))).outcome, 'delivered');
    const ids = (await server.messages()).map((m) => header(m.headers, 'Message-ID')[0]);
    assert.equal(ids.length, 3);
    assert.equal(ids[0], ids[1]);
    assert.notEqual(ids[1], ids[2]);
  });

  it('keeps hostile names out of the headers: no injected header, one line, bounded subject', async () => {
    const server = await sinkWith();
    const hostile = payload({
      component: { id: 'x', name: 'Evil\u202e\u0000 component' },
      configuration: { id: '9', name: `Orders\r\nBcc: victim@evil.example\r\nX-Injected: 1\n${'z'.repeat(500)}` },
      message: 'first line\r\n.\r\nMAIL FROM:<x@evil.example>\r\nsecond line',
    });
    assert.equal((await senderFor(`smtp://127.0.0.1:${server.port}`).send(TO, hostile)).outcome, 'delivered');
    const [message, ...others] = await server.messages();
    assert.equal(others.length, 0);
    assert.deepEqual(message.rcptTos, [TO]);
    const rawHeaders = message.raw.slice(0, message.raw.indexOf('\r\n\r\n'));
    assert.ok(!/^(Bcc|X-Injected):/im.test(rawHeaders), rawHeaders);
    assert.deepEqual(header(message.headers, 'Bcc'), []);
    assert.deepEqual(header(message.headers, 'X-Injected'), []);
    assert.ok(!/[\r\n\u0000\u202e]/.test(message.subject), JSON.stringify(message.subject));
    assert.ok(
      message.subject.startsWith(
        'gex: job 123 failed — Evil component/Orders Bcc: victim@evil.example X-Injected: 1 z',
      ),
    );
    assert.ok(message.subject.length <= 200, `${message.subject.length} characters`);
    // the message keeps its lines; the SMTP end-of-data line inside it was escaped, not obeyed
    assert.match(message.text!, /\n {2}first line\n {2}\.\n {2}MAIL FROM:<x@evil\.example>\n {2}second line\n/);
  });

  it('logs in with AUTH; a wrong password is final (535) and its outcome never holds the password', async () => {
    const server = await sinkWith({ auth: { user: 'gex', password: PASSWORD } });
    const good = await senderFor(`smtp://gex:${PASSWORD}@127.0.0.1:${server.port}`).send(TO, payload());
    assert.equal(good.outcome, 'delivered');
    await sender!.close();
    const wrong = 'Wr0ng-Pa55-9e1d';
    const bad = await senderFor(`smtp://gex:${wrong}@127.0.0.1:${server.port}`).send(TO, payload());
    assert.equal(bad.outcome, 'final', JSON.stringify(bad));
    assert.equal(bad.statusCode, 535);
    assert.match(bad.message, /^SMTP 535 to AUTH (PLAIN|LOGIN): 5\.7\.8 Authentication credentials invalid$/);
    for (const secret of [
      wrong,
      Buffer.from(wrong).toString('base64'),
      Buffer.from(`\0gex\0${wrong}`).toString('base64'),
    ])
      assert.ok(!bad.message.includes(secret), bad.message);
    const messages = await server.messages();
    assert.deepEqual(
      messages.map((m) => m.login),
      ['gex'],
    );
  });

  it('a relay wanting a login the URL does not give is final (530)', async () => {
    const server = await sinkWith({ auth: { user: 'gex', password: PASSWORD } });
    const outcome = await senderFor(`smtp://127.0.0.1:${server.port}`).send(TO, payload());
    assert.deepEqual([outcome.outcome, outcome.statusCode], ['final', 530]);
    assert.deepEqual(await server.messages(), []);
  });

  it('with ?starttls=required, upgrades and sends over TLS, checking the certificate', async () => {
    const server = await sinkWith({ tls: { mode: 'starttls-required', ...certificate } });
    const url = `smtp://127.0.0.1:${server.port}?starttls=required`;
    const outcome = await senderFor(url, { ca: certificate.pem }).send(TO, payload());
    assert.deepEqual([outcome.outcome, outcome.statusCode], ['delivered', 250]);
    assert.deepEqual(
      (await server.messages()).map((m) => m.tls),
      [true],
    );
    await sender!.close();
    // a certificate the sender does not trust: the TLS handshake fails, to be tried again
    const untrusted = await senderFor(url).send(TO, payload());
    assert.equal(untrusted.outcome, 'retry');
    assert.equal(untrusted.statusCode, null);
    assert.equal(
      untrusted.message,
      `TLS with 127.0.0.1:${server.port} failed: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT); trust the relay's CA with NODE_EXTRA_CA_CERTS, or fix its certificate`,
    );
    assert.equal((await server.messages()).length, 1);
  });

  it('STARTTLS when offered; required against a relay without it sends nothing in plain text', async () => {
    const offering = await sinkWith({ tls: { mode: 'starttls', ...certificate } });
    assert.equal(
      (await senderFor(`smtp://127.0.0.1:${offering.port}`, { ca: certificate.pem }).send(TO, payload())).outcome,
      'delivered',
    );
    assert.deepEqual(
      (await offering.messages()).map((m) => m.tls),
      [true],
    );
    await sender!.close();
    await offering.stop();

    const plain = await sinkWith();
    const outcome = await senderFor(`smtp://127.0.0.1:${plain.port}?starttls=required`).send(TO, payload());
    assert.notEqual(outcome.outcome, 'delivered');
    assert.match(outcome.message, /STARTTLS/);
    assert.deepEqual(await plain.messages(), []);
  });

  it('smtps:// speaks TLS from the start, with AUTH', async () => {
    const server = await sinkWith({
      tls: { mode: 'implicit', ...certificate },
      auth: { user: 'gex', password: PASSWORD },
    });
    const outcome = await senderFor(`smtps://gex:${PASSWORD}@127.0.0.1:${server.port}`, { ca: certificate.pem }).send(
      TO,
      payload(),
    );
    assert.deepEqual([outcome.outcome, outcome.statusCode], ['delivered', 250]);
    assert.deepEqual(
      (await server.messages()).map((m) => [m.tls, m.login]),
      [[true, 'gex']],
    );
  });

  it('smtps:// to a relay that does not speak TLS on the port is tried again, in words', async () => {
    const server = await sinkWith();
    const outcome = await senderFor(`smtps://127.0.0.1:${server.port}`).send(TO, payload());
    assert.deepEqual(outcome, {
      outcome: 'retry',
      statusCode: null,
      message: `TLS with 127.0.0.1:${server.port} failed: wrong version number: the relay does not speak TLS on this port (smtp:// rather than smtps://?)`,
    });
  });

  it('a 4xx reply is tried again (451), a 5xx reply is final (550); neither is stored', async () => {
    const server = await sinkWith();
    const mail = senderFor(`smtp://127.0.0.1:${server.port}`);
    const later: AttemptOutcome = await mail.send('fail451@example.com', payload());
    assert.deepEqual(later, {
      outcome: 'retry',
      statusCode: 451,
      message: 'SMTP 451 to RCPT TO: 4.0.0 injected failure for this recipient',
    });
    const never = await mail.send('fail550@example.com', payload());
    assert.deepEqual(never, {
      outcome: 'final',
      statusCode: 550,
      message: 'SMTP 550 to RCPT TO: 5.0.0 injected failure for this recipient',
    });
    assert.deepEqual(await server.messages(), []);
  });
});

describe('e-mail notifications: relays that are down or silent, stops', () => {
  const senders: EmailSender[] = [];
  afterEach(() => Promise.all(senders.splice(0).map((s) => s.close())));
  const senderFor = (url: string, timeoutMs: number) => {
    const sender = new EmailSender(parseSmtpSettings({ url, from: FROM }), { timeoutMs });
    senders.push(sender);
    return sender;
  };

  it('a relay that is down (connection refused) is tried again', async () => {
    const port = await closedPort();
    const outcome = await senderFor(`smtp://127.0.0.1:${port}`, 5_000).send(TO, payload());
    assert.deepEqual(outcome, {
      outcome: 'retry',
      statusCode: null,
      message: `cannot send through 127.0.0.1:${port}: ECONNREFUSED (connection refused)`,
    });
  });

  it('a relay that accepts the connection and never answers is tried again, within the timeout', async () => {
    const silent = await startSilentServer();
    try {
      const started = Date.now();
      const outcome = await senderFor(`smtp://127.0.0.1:${silent.port}`, 300).send(TO, payload());
      const took = Date.now() - started;
      assert.deepEqual(outcome, {
        outcome: 'retry',
        statusCode: null,
        message: `no reply from 127.0.0.1:${silent.port} within 300 ms`,
      });
      assert.ok(took >= 250 && took < 3_000, `took ${took} ms`);
    } finally {
      await silent.stop();
    }
  });

  it("the caller's signal and close() end an attempt in flight (retry); after close nothing is sent", async () => {
    const silent = await startSilentServer();
    try {
      const sender = senderFor(`smtp://127.0.0.1:${silent.port}`, 60_000);
      const stop = new AbortController();
      const stopped = sender.send(TO, payload(), stop.signal);
      stop.abort();
      assert.deepEqual(await stopped, { outcome: 'retry', statusCode: null, message: 'the attempt was stopped' });

      const inFlight = sender.send(TO, payload());
      await sender.close();
      assert.deepEqual(await inFlight, {
        outcome: 'retry',
        statusCode: null,
        message: 'the e-mail sender was closed during the attempt',
      });
      assert.deepEqual(await sender.send(TO, payload()), {
        outcome: 'retry',
        statusCode: null,
        message: 'the e-mail sender is closed',
      });
    } finally {
      await silent.stop();
    }
  });

  it('a payload it cannot write as an e-mail is final, without connecting', async () => {
    const port = await closedPort();
    const broken = { ...payload(), job: { ...payload().job, component: null } } as unknown as NotificationPayload;
    const outcome = await senderFor(`smtp://127.0.0.1:${port}`, 5_000).send(TO, broken);
    assert.equal(outcome.outcome, 'final');
    assert.match(outcome.message, /^the notification cannot be written as an e-mail: /);
  });

  it('refuses a recipient that is not a plain address (final), without connecting', async () => {
    const port = await closedPort();
    const outcome = await senderFor(`smtp://127.0.0.1:${port}`, 5_000).send(
      'ops@example.com\r\nBcc: x@evil.example',
      payload(),
    );
    assert.deepEqual(outcome, {
      outcome: 'final',
      statusCode: null,
      message: 'the recipient is not an e-mail address',
    });
  });
});
