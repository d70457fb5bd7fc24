import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SUBSCRIPTION_SECRETS } from '../../src/jobs/job-queue.js';
import { subscriptionInput } from '../../src/jobs/notifications/subscription-input.js';
import { MAX_SUBSCRIPTIONS, SubscriptionRepository } from '../../src/jobs/notifications/subscription-repository.js';
import type { JsonValue } from '../../src/json/index.js';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import { runGex, startServe } from '../support/cli.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { call, type Json } from '../support/queue.js';
import { storeBackends } from '../support/store.js';

const KEY = { GEX_MASTER_KEY: '5a'.repeat(32) };
const PATH = '/project-subscriptions';
const HOOK = { channel: 'webhook', url: 'https://hooks.example.com/gex' };
const QUERY_SECRET = 'q5ecr3t-in-the-query';

/** Keboola's Notification API on a real gex serve: subscriptions, refusals naming the field, tokens and projects. */
describe('Notification API subscriptions (gex serve)', function () {
  this.timeout(60_000);
  let dir: string;
  let store: string;
  let served: { child: ChildProcess; url: string; output: () => string };
  let token: string;
  let reader: string;
  let stranger: string;

  const post = (body: unknown, as = token) => call(served.url, as, 'POST', PATH, body);
  const listed = async (as = token) => (await call(served.url, as, 'GET', PATH)).body as Json[];

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-notification-api-'));
    store = path.join(dir, 'store.sqlite');
    const made = async (args: string[]) => {
      const r = await runGex(['tokens', 'create', ...args, '--store', store], KEY);
      assert.equal(r.code, 0, r.stderr);
      return r.stdout.trim();
    };
    token = await made(['--description', 'ci']);
    reader = await made(['--description', 'viewer', '--read-only']);
    stranger = await made(['--description', 'other', '--project', 'other']);
    served = await startServe(['--store', store, '--workers', '0'], KEY);
  });
  after(async () => {
    served?.child.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const as of [token, stranger])
      for (const s of await listed(as)) await call(served.url, as, 'DELETE', `${PATH}/${s.id}`);
  });

  it('is listed in the API index as the service "notification" at the server\'s origin', async () => {
    const services = (await call(served.url, token, 'GET', '/v2/storage')).body.services as Json[];
    assert.deepEqual(
      services.find((s) => s.id === 'notification'),
      { id: 'notification', url: served.url },
    );
  });

  it("creates, lists, reads and deletes subscriptions in Keboola's shape", async () => {
    const made = await post({
      event: 'job-failed',
      filters: [
        { field: 'job.component.id', value: 'ex-generic-v2' },
        { field: 'durationOvertimePercentage', value: 0.75, operator: '>=' },
      ],
      recipient: HOOK,
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.match(made.body.id, /^\d+$/);
    assert.equal(made.body.event, 'job-failed');
    assert.deepEqual(made.body.filters, [
      { field: 'job.component.id', value: 'ex-generic-v2', operator: '==' },
      { field: 'durationOvertimePercentage', value: 0.75, operator: '>=' },
    ]);
    assert.deepEqual(made.body.recipient, HOOK);
    const email = await post({
      event: 'phase-job-succeeded-with-warning',
      recipient: { channel: 'email', address: 'ops@example.com' },
    });
    assert.equal(email.status, 201, JSON.stringify(email.body));
    assert.deepEqual(email.body.filters, []);
    assert.equal(email.body.signingSecret, undefined, 'an e-mail subscription has no signing secret');

    const all = await listed();
    assert.deepEqual(
      all.map((s) => s.id),
      [made.body.id, email.body.id],
    );
    const detail = await call(served.url, token, 'GET', `${PATH}/${made.body.id}`);
    assert.equal(detail.status, 200);
    const { signingSecret: _shown, ...withoutSecret } = made.body;
    assert.deepEqual(detail.body, withoutSecret);
    // a reader lists and reads, but neither creates nor deletes
    assert.equal((await listed(reader)).length, 2);
    for (const refused of [
      await post({ event: 'job-failed', recipient: HOOK }, reader),
      await call(served.url, reader, 'DELETE', `${PATH}/${made.body.id}`),
    ]) {
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.match(refused.body.error, /read-only token/);
    }
    // another project's subscription is not found, for reading and deleting alike
    for (const method of ['GET', 'DELETE']) {
      const other = await call(served.url, stranger, method, `${PATH}/${made.body.id}`);
      assert.equal(other.status, 404, `${method}: ${JSON.stringify(other.body)}`);
      assert.match(other.body.error, /Subscription "\d+" not found/);
    }
    assert.deepEqual(await listed(stranger), []);
    assert.equal((await call(served.url, token, 'DELETE', `${PATH}/${made.body.id}`)).status, 204);
    assert.equal((await call(served.url, token, 'GET', `${PATH}/${made.body.id}`)).status, 404);
    assert.equal((await call(served.url, token, 'DELETE', `${PATH}/${made.body.id}`)).status, 404);
    assert.equal((await call(served.url, token, 'GET', `${PATH}/not-a-number`)).status, 404);
    assert.deepEqual(
      (await listed()).map((s) => s.id),
      [email.body.id],
    );
  });

  it('refuses bad input with 400 naming the field and how to fix it, storing nothing', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['not an object', [1], /body: expected/],
      ['unknown event', { event: 'job-exploded', recipient: HOOK }, /event: expected one of "job-failed"/],
      ['no event', { recipient: HOOK }, /event: expected one of/],
      [
        'unknown filter field',
        { event: 'job-failed', filters: [{ field: 'job.secret', value: 'x' }], recipient: HOOK },
        /filters\[0\]\.field: expected one of "job\.component\.id"/,
      ],
      [
        'unknown operator',
        { event: 'job-failed', filters: [{ field: 'job.id', value: 1, operator: '!=' }], recipient: HOOK },
        /filters\[0\]\.operator: expected one of "==", "<"/,
      ],
      [
        'an ordering operator on a string',
        { event: 'job-failed', filters: [{ field: 'job.id', value: 'x', operator: '<' }], recipient: HOOK },
        /filters\[0\]\.value: operator "<" compares numbers/,
      ],
      [
        'too many filters',
        { event: 'job-failed', filters: Array(21).fill({ field: 'job.id', value: '1' }), recipient: HOOK },
        /filters: expected a list of at most 20 filters/,
      ],
      [
        'a filter value too long',
        { event: 'job-failed', filters: [{ field: 'job.id', value: 'x'.repeat(257) }], recipient: HOOK },
        /filters\[0\]\.value: expected at most 256 characters/,
      ],
      ['no recipient', { event: 'job-failed' }, /recipient: expected \{"channel": "webhook"/],
      [
        'unknown channel',
        { event: 'job-failed', recipient: { channel: 'sms' } },
        /recipient\.channel: expected "webhook" or "email"/,
      ],
      [
        'a URL that is not http(s)',
        { event: 'job-failed', recipient: { channel: 'webhook', url: 'file:///etc/passwd' } },
        /recipient\.url: expected an http:\/\/ or https:\/\/ URL/,
      ],
      [
        'no URL at all',
        { event: 'job-failed', recipient: { channel: 'webhook', url: 'hooks here' } },
        /recipient\.url: expected an absolute http\(s\) URL/,
      ],
      [
        'a URL holding credentials',
        { event: 'job-failed', recipient: { channel: 'webhook', url: 'https://bob:hunter22@hooks.example.com/' } },
        /recipient\.url: must not hold credentials \(user:password@\)/,
      ],
      [
        'a URL over 2 KB',
        {
          event: 'job-failed',
          recipient: { channel: 'webhook', url: `https://hooks.example.com/${'a'.repeat(2048)}` },
        },
        /recipient\.url: expected at most 2048 bytes \(2 KB\)/,
      ],
      [
        'an address that is not an address',
        { event: 'job-failed', recipient: { channel: 'email', address: 'ops at example' } },
        /recipient\.address: expected an e-mail address/,
      ],
      [
        'an address with a display name',
        { event: 'job-failed', recipient: { channel: 'email', address: 'Ops <ops@example.com>' } },
        /recipient\.address: expected an e-mail address/,
      ],
    ];
    for (const [what, body, message] of cases) {
      const res = await post(body);
      assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.body)}`);
      assert.match(res.body.error, message, what);
      assert.equal(res.body.context?.errorCode ?? res.body.code, 'notification.validation', what);
      // nothing of the bad URL is echoed back
      assert.ok(!JSON.stringify(res.body).includes('hunter22'), what);
    }
    assert.deepEqual(await listed(), []);
    assert.ok(!served.output().includes('hunter22'), 'the refused credentials are in no log line');
  });

  it('shows the signing secret once; a secret in the URL query is masked in answers and log lines', async () => {
    const url = `https://hooks.example.com/gex?token=${QUERY_SECRET}&plain#frag-${QUERY_SECRET}`;
    const made = await post({ event: 'job-succeeded', recipient: { channel: 'webhook', url } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.match(made.body.signingSecret, /^[0-9a-f]{64}$/);
    assert.equal(made.body.recipient.url, 'https://hooks.example.com/gex?token=[hidden]&[hidden]#[hidden]');
    const detail = await call(served.url, token, 'GET', `${PATH}/${made.body.id}`);
    const list = await listed();
    for (const text of [JSON.stringify(detail.body), JSON.stringify(list)]) {
      assert.ok(!text.includes(made.body.signingSecret), 'the signing secret is shown only once');
      assert.ok(!text.includes('signingSecret'), text);
      assert.ok(!text.includes(QUERY_SECRET), text);
    }
    assert.ok(!JSON.stringify(made.body).includes(QUERY_SECRET));
    assert.ok(!served.output().includes(QUERY_SECRET), 'the query secret is in no log line');
    assert.ok(!served.output().includes(made.body.signingSecret), 'the signing secret is in no log line');
    // the whole URL and the secret are kept sealed, for delivery
    const backend = await openEmbeddedStore(store, KEY);
    try {
      const repo = new SubscriptionRepository(backend.db, backend.projectSecrets(SUBSCRIPTION_SECRETS));
      const row = await backend.db.get<Json>(
        'SELECT project_id, recipient, sealed FROM notification_subscriptions WHERE id = ?',
        [Number(made.body.id)],
      );
      assert.ok(!String(row?.sealed).includes(QUERY_SECRET) && !String(row?.sealed).includes(made.body.signingSecret));
      assert.ok(!String(row?.recipient).includes(QUERY_SECRET));
      const projectId = Number(row?.project_id);
      assert.deepEqual(await repo.webhookSecrets(projectId, Number(made.body.id)), {
        url,
        signingSecret: made.body.signingSecret,
      });
    } finally {
      await backend.close();
    }
  });

  it(`bounds a project to ${MAX_SUBSCRIPTIONS} subscriptions, naming the bound; other projects are not counted`, async function () {
    this.timeout(30_000);
    const first = await post({ event: 'job-failed', recipient: HOOK });
    assert.equal(first.status, 201);
    const backend = await openEmbeddedStore(store, KEY);
    try {
      const repo = new SubscriptionRepository(backend.db, backend.projectSecrets(SUBSCRIPTION_SECRETS));
      const projectId = Number(
        (
          await backend.db.get<Json>('SELECT project_id FROM notification_subscriptions WHERE id = ?', [
            Number(first.body.id),
          ])
        )?.project_id,
      );
      const input = subscriptionInput(
        new Map<string, JsonValue>([
          ['event', 'job-failed'],
          [
            'recipient',
            new Map<string, JsonValue>([
              ['channel', 'email'],
              ['address', 'a@example.com'],
            ]),
          ],
        ]),
      );
      for (let i = 1; i < MAX_SUBSCRIPTIONS; i++) await repo.create(projectId, input);
    } finally {
      await backend.close();
    }
    assert.equal((await listed()).length, MAX_SUBSCRIPTIONS);
    const refused = await post({ event: 'job-failed', recipient: HOOK });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.match(refused.body.error, /at most 1000 subscriptions: delete one/);
    assert.equal((await listed()).length, MAX_SUBSCRIPTIONS);
    assert.equal((await post({ event: 'job-failed', recipient: HOOK }, stranger)).status, 201);
  });
});

for (const factory of storeBackends()) {
  describe(`SubscriptionRepository (${factory.name})`, function () {
    this.timeout(30_000);
    let opened: { backend: EmbeddedBackend; dispose(): Promise<void> };
    before(async () => {
      opened = await factory.open();
    });
    after(() => opened?.dispose());

    it('keeps projects apart, seals the webhook secrets, bounds a project under concurrent creations', async () => {
      const { backend } = opened;
      const [a, b] = await Promise.all(
        ['alpha', 'beta'].map(
          async (project) => (await backend.createToken({ description: 't', project })).info.projectId,
        ),
      );
      const bound = 5;
      const repo = new SubscriptionRepository(backend.db, backend.projectSecrets(SUBSCRIPTION_SECRETS), bound);
      const url = `http://127.0.0.1:9/hook?sig=${QUERY_SECRET}`;
      const input = subscriptionInput(
        new Map<string, JsonValue>([
          ['event', 'job-processing-long'],
          [
            'filters',
            [
              new Map<string, string | number>([
                ['field', 'durationOvertimePercentage'],
                ['value', 20],
                ['operator', '>'],
              ]),
            ],
          ],
          [
            'recipient',
            new Map<string, JsonValue>([
              ['channel', 'webhook'],
              ['url', url],
            ]),
          ],
        ]),
      );
      const made = await repo.create(a, input);
      assert.equal(made.subscription.recipient.channel, 'webhook');
      assert.ok(!JSON.stringify(made.subscription).includes(QUERY_SECRET));
      assert.deepEqual(await repo.webhookSecrets(a, made.subscription.id), { url, signingSecret: made.signingSecret });
      assert.equal(await repo.get(b, made.subscription.id), undefined);
      assert.equal(await repo.remove(b, made.subscription.id), false);
      // sealed for project a: project b cannot open it even with the row in hand
      const sealed = String((await backend.db.get<Json>('SELECT sealed FROM notification_subscriptions'))?.sealed);
      assert.throws(() => backend.projectSecrets(SUBSCRIPTION_SECRETS).open(b, sealed));
      // ten at once against a bound of five: exactly four more are taken
      const results = await Promise.allSettled(Array.from({ length: 10 }, () => repo.create(a, input)));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, bound - 1);
      for (const r of results)
        if (r.status === 'rejected') assert.match((r.reason as Error).message, /at most 5 subscriptions/);
      assert.equal(await repo.count(a), bound);
      assert.equal(await repo.count(b), 0);
      assert.equal(await repo.remove(a, made.subscription.id), true);
      assert.equal(await repo.count(a), bound - 1);
    });
  });
}
