import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runGex, startServe } from '../../support/cli.js';
import { consoleLogin, type ConsoleClient, type ConsolePage } from '../../support/console.js';
import { call, type Json } from '../../support/queue.js';

const KEY = { GEX_MASTER_KEY: '6e'.repeat(32) };
const COMPONENT = 'ex-generic-v2';
const CONFIGS = `/v2/storage/branch/default/components/${COMPONENT}/configs`;
const SCHEDULER_CONFIGS = '/v2/storage/branch/default/components/keboola.scheduler/configs';
const HOSTILE = '<img src=x onerror=alert(1)>';
/** secrets put under `#` keys: none may appear in any page, nor any cipher of them */
const SECRETS = ['hunter2-config', 'hunter2-row', 'hunter2-state', 'hunter2-changed'];

const pageOf = (component: string, id: string) =>
  `/console/configurations/${encodeURIComponent(component)}/${encodeURIComponent(id)}`;

/** The list's table row of a configuration. */
const rowOf = (html: string, component: string, id: string) =>
  html.split('<tr>').find((tr) => tr.includes(`${pageOf(component, id)}"`)) ?? '';

/** The text of a page's HTML with its entities decoded (what a person reads). */
const text = (html: string) =>
  html
    .replace(/<[^>]*>/g, '')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** Issue 36 item 3, "Configurations", over plain HTTP on a real gex serve. */
describe('console: configurations', function () {
  this.timeout(90_000);
  let dir: string;
  let served: { child: ChildProcess; url: string; output: () => string };
  let token: string;
  let reader: string;
  let stranger: string;
  let client: ConsoleClient;
  /** every page fetched, to look for secrets at the end */
  const seen: ConsolePage[] = [];
  let rowed: string;
  let diffed: string;
  let hostile: string;

  const api = async (method: string, url: string, body?: unknown, as = token) => {
    const r = await call(served.url, as, method, url, body);
    assert.ok(r.status < 300, `${method} ${url}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const get = async (path: string, as = client) => {
    const page = await as.get(path);
    seen.push(page);
    return page;
  };
  const versionOf = async (id: string) => Number((await api('GET', `${CONFIGS}/${id}`)).version);

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-console-configs-'));
    const store = path.join(dir, 'store.sqlite');
    const made = async (args: string[]) => {
      const r = await runGex(['tokens', 'create', ...args, '--store', store], KEY);
      assert.equal(r.code, 0, r.stderr);
      return r.stdout.trim();
    };
    token = await made(['--description', 'ci']);
    reader = await made(['--description', 'viewer', '--read-only']);
    stranger = await made(['--description', 'other', '--project', 'other']);
    served = await startServe(['--store', store, '--workers', '0'], KEY);
    client = await consoleLogin(served.url, token);

    // rows in an order of their own, one disabled; secrets in the configuration, a row and the state
    rowed = String(
      (
        await api('POST', CONFIGS, {
          name: 'rowed',
          description: 'has rows',
          configuration: { parameters: { '#password': SECRETS[0], api: { baseUrl: 'http://127.0.0.1:9/' } } },
        })
      ).id,
    );
    const row = async (name: string, more: Json = {}) =>
      String(
        (
          await api('POST', `${CONFIGS}/${rowed}/rows`, {
            name,
            configuration: { parameters: { '#rowSecret': SECRETS[1], tag: `tag-${name}` } },
            ...more,
          })
        ).id,
      );
    const one = await row('row-one');
    const two = await row('row-two', { isDisabled: true });
    const three = await row('row-three');
    await api('PUT', `${CONFIGS}/${rowed}`, { rowsSortOrder: [three, one, two] });
    await api('PUT', `${CONFIGS}/${rowed}/state`, {
      state: { component: { '#token': SECRETS[2], cursor: 'cursor-at-5' } },
    });

    // two versions: a value and a secret changed
    diffed = String(
      (
        await api('POST', CONFIGS, {
          name: 'diffed',
          configuration: { parameters: { alpha: 'first-alpha', keep: 'kept-value', '#key': SECRETS[0] } },
        })
      ).id,
    );
    await api('PUT', `${CONFIGS}/${diffed}`, {
      configuration: { parameters: { alpha: 'second-alpha', keep: 'kept-value', '#key': SECRETS[3] } },
      changeDescription: 'alpha changed',
    });

    hostile = String(
      (await api('POST', CONFIGS, { name: HOSTILE, description: `<script>alert(2)</script>`, configuration: {} })).id,
    );
    await api('POST', `${CONFIGS}/${hostile}/rows`, { name: HOSTILE, configuration: {} });
  });
  after(async () => {
    served?.child.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  });

  it('lists configurations per component with their last job and their next scheduled run', async () => {
    const created = await api('POST', '/jobs', { component: COMPONENT, config: rowed });
    const scheduler = await api('POST', SCHEDULER_CONFIGS, {
      name: 'nightly',
      configuration: {
        schedule: { cronTab: '0 0 1 1 *', timezone: 'Europe/Prague', state: 'enabled' },
        target: { componentId: COMPONENT, configurationId: rowed, mode: 'run' },
      },
    });
    await api('POST', '/schedules', { configurationId: String(scheduler.id) });

    const list = await get('/console/configurations');
    assert.equal(list.status, 200);
    assert.match(list.html, /aria-current="page">Configurations</);
    const rowedLine = rowOf(list.html, COMPONENT, rowed);
    assert.ok(rowedLine, list.html);
    assert.ok(
      rowedLine.includes(
        `<a href="/console/jobs/${created.id}">${created.id}</a> <span class="status ${created.status}">`,
      ),
      rowedLine,
    );
    // the next 1 January, midnight in Prague (23:00 UTC the day before)
    assert.match(
      rowedLine,
      /<time datetime="\d{4}-12-31T23:00:00.000Z">[^<]*<\/time> <small class="muted">0 0 1 1 \* \(Europe\/Prague\)/,
    );
    const diffedLine = rowOf(list.html, COMPONENT, diffed);
    assert.match(diffedLine ?? '', /never run/);
    assert.match(list.html, /keboola\.scheduler/, 'every component with configurations');
  });

  it("a configuration's page: its rows in their order, the disabled one marked, its state and versions", async () => {
    const page = await get(pageOf(COMPONENT, rowed));
    assert.equal(page.status, 200);
    const [three, one, two] = ['row-three', 'row-one', 'row-two'].map((name) => page.html.indexOf(`<h3>${name}`));
    assert.ok(three > 0 && three < one && one < two, `rows in rowsSortOrder: ${three} ${one} ${two}`);
    assert.match(
      page.html,
      /<li class="row disabled">\s*<h3>row-two <small class="muted">\d+<\/small> <span class="status disabled">disabled<\/span>/,
    );
    assert.doesNotMatch(page.html, /<li class="row disabled">\s*<h3>row-(one|three)/);
    assert.match(text(page.html), /"cursor": "cursor-at-5"/);
    assert.match(text(page.html), /"#token": "\[hidden\]"/);
    assert.match(text(page.html), /"#password": "\[hidden\]"/);
    assert.match(text(page.html), /"#rowSecret": "\[hidden\]"/);
    assert.match(page.html, /has rows/);
    // created, three rows, the order: five versions, newest first
    const versions = [...page.html.matchAll(/\?version=(\d+)">\1</g)].map((m) => Number(m[1]));
    assert.deepEqual(versions, [5, 4, 3, 2, 1]);
    assert.match(page.html, /<button type="submit">Run<\/button>/);
  });

  it('shows a version against the one before, the changed lines marked added and removed', async () => {
    const page = await get(`${pageOf(COMPONENT, diffed)}?version=2`);
    assert.equal(page.status, 200);
    assert.match(page.html, /Version 2 against version 1/);
    assert.match(page.html, /alpha changed/);
    const spans = [...page.html.matchAll(/<span class="(added|removed|same)">([^<]*)<\/span>/g)].map((m) => ({
      kind: m[1],
      line: text(m[2]),
    }));
    const kindOf = (part: string) => spans.filter((s) => s.line.includes(part)).map((s) => s.kind);
    assert.deepEqual(kindOf('first-alpha'), ['removed']);
    assert.deepEqual(kindOf('second-alpha'), ['added']);
    assert.deepEqual(kindOf('kept-value'), ['same']);
    // a changed secret is marked changed, and only that
    assert.deepEqual(kindOf('"#key": "[hidden]"'), ['removed']);
    assert.deepEqual(kindOf('"#key": "[hidden, changed]"'), ['added']);
    assert.ok(!spans.some((s) => s.kind !== 'same' && s.line.includes('"name"')), 'the name did not change');

    const latest = await get(pageOf(COMPONENT, diffed));
    assert.match(latest.html, /Version 2 against version 1/, 'the latest version by default');
    assert.doesNotMatch(latest.html, /Rollback to version/, 'no rollback to the version it is');
    const first = await get(`${pageOf(COMPONENT, diffed)}?version=1`);
    assert.match(first.html, /<h2>Version 1<\/h2>/);
    assert.ok(!first.html.includes('class="removed"'), 'the first version: only added lines');
    assert.match(first.html, /Rollback to version 1/);
  });

  it('Rollback makes a new version equal to the one shown', async () => {
    const before = await versionOf(diffed);
    const rolled = await client.post(`${pageOf(COMPONENT, diffed)}/rollback`, { version: '1' });
    assert.equal(rolled.status, 303, rolled.html);
    assert.equal(rolled.headers.get('location'), `${pageOf(COMPONENT, diffed)}?version=${before + 1}`);
    const now = await api('GET', `${CONFIGS}/${diffed}`);
    assert.equal(now.version, before + 1);
    const v1 = await api('GET', `${CONFIGS}/${diffed}/versions/1`);
    assert.deepEqual(now.configuration, v1.configuration);
    assert.equal(now.configuration.parameters.alpha, 'first-alpha');
    const page = await get(`${pageOf(COMPONENT, diffed)}?version=${before + 1}`);
    assert.match(page.html, /<span class="added">[^<]*first-alpha/);
  });

  it('Copy makes a new configuration and leads to it', async () => {
    const copied = await client.post(`${pageOf(COMPONENT, rowed)}/copy`, { version: '4', name: 'the copy' });
    assert.equal(copied.status, 303, copied.html);
    const id = /\/console\/configurations\/ex-generic-v2\/([^/?]+)$/.exec(copied.headers.get('location') ?? '')?.[1];
    assert.ok(id && id !== rowed, copied.headers.get('location') ?? '');
    const copy = await api('GET', `${CONFIGS}/${decodeURIComponent(id)}`);
    assert.equal(copy.name, 'the copy');
    // version 4 had its three rows, before their order was set
    assert.deepEqual(
      (copy.rows as Json[]).map((r) => r.name),
      ['row-one', 'row-two', 'row-three'],
    );
    const page = await get(pageOf(COMPONENT, decodeURIComponent(id)));
    assert.equal(page.status, 200);
    assert.match(page.html, /<h1>the copy /);
  });

  it('Run queues a job of the configuration and leads to its page', async () => {
    const ran = await client.post(`${pageOf(COMPONENT, diffed)}/run`);
    assert.equal(ran.status, 303, ran.html);
    const id = /^\/console\/jobs\/(\d+)$/.exec(ran.headers.get('location') ?? '')?.[1];
    assert.ok(id, ran.headers.get('location') ?? '');
    const job = await api('GET', `/jobs/${id}`);
    assert.equal(job.component, COMPONENT);
    assert.equal(job.config, diffed);
    const list = await get('/console/configurations');
    const line = rowOf(list.html, COMPONENT, diffed);
    assert.ok(line?.includes(`<a href="/console/jobs/${id}">${id}</a>`), line);
  });

  it('renders a hostile name, description and row name as text', async () => {
    const list = await get('/console/configurations');
    const page = await get(pageOf(COMPONENT, hostile));
    for (const html of [list.html, page.html]) {
      assert.ok(!html.includes('<img src=x'), 'no img element');
      assert.ok(!html.includes('<script>alert'), 'no script element');
      assert.ok(html.includes('&lt;img src=x onerror=alert(1)&gt;'));
    }
    assert.ok(page.html.includes('&lt;script&gt;alert(2)&lt;/script&gt;'));
  });

  it('a read-only token sees no buttons and its POSTs are refused', async () => {
    const viewer = await consoleLogin(served.url, reader);
    const page = await get(pageOf(COMPONENT, diffed), viewer);
    assert.equal(page.status, 200);
    assert.match(page.html, /Read-only token/);
    assert.doesNotMatch(page.html, /<button type="submit">(Run|Rollback|Copy)/);
    assert.doesNotMatch(page.html, /\/(run|rollback|copy)"/);
    const before = await versionOf(diffed);
    const jobsBefore = (await api('GET', '/search/jobs?limit=500')) as unknown as Json[];
    for (const [action, fields] of [
      ['run', {}],
      ['rollback', { version: '1' }],
      ['copy', { version: '1', name: 'read-only copy' }],
    ] as const) {
      const refused = await viewer.post(`${pageOf(COMPONENT, diffed)}/${action}`, fields);
      assert.equal(refused.status, 403, action);
    }
    assert.equal(await versionOf(diffed), before);
    assert.equal(((await api('GET', '/search/jobs?limit=500')) as unknown as Json[]).length, jobsBefore.length);
    const names = ((await api('GET', CONFIGS)) as unknown as Json[]).map((c) => c.name);
    assert.ok(!names.includes('read-only copy'));
  });

  it("another project's configuration, a deleted one and an unknown one are 404 pages", async () => {
    const other = await consoleLogin(served.url, stranger);
    const page = await get(pageOf(COMPONENT, diffed), other);
    assert.equal(page.status, 404);
    assert.doesNotMatch(page.html, /diffed|first-alpha/);
    const list = await get('/console/configurations', other);
    assert.equal(list.status, 200);
    assert.ok(!list.html.includes(pageOf(COMPONENT, diffed)), "not in the other project's list");
    const run = await other.post(`${pageOf(COMPONENT, diffed)}/run`);
    assert.equal(run.status, 404);
    const rollback = await other.post(`${pageOf(COMPONENT, diffed)}/rollback`, { version: '1' });
    assert.equal(rollback.status, 404);

    const doomed = String((await api('POST', CONFIGS, { name: 'doomed', configuration: {} })).id);
    await api('DELETE', `${CONFIGS}/${doomed}`);
    assert.equal((await get(pageOf(COMPONENT, doomed))).status, 404);
    assert.equal((await get(pageOf(COMPONENT, 'no-such-config'))).status, 404);
    assert.equal((await get(pageOf('no.such-component', '1'))).status, 404);
    assert.equal((await get(`${pageOf(COMPONENT, diffed)}?version=999`)).status, 404);
    assert.equal((await get(`${pageOf(COMPONENT, diffed)}?version=x`)).status, 404);
  });

  it('a POST without the CSRF token (or with a wrong one) is refused and changes nothing', async () => {
    const before = await versionOf(diffed);
    const none = await client.post(`${pageOf(COMPONENT, diffed)}/rollback`, { version: '1' }, null);
    assert.equal(none.status, 403);
    const wrong = await client.post(`${pageOf(COMPONENT, diffed)}/rollback`, { version: '1' }, 'x'.repeat(43));
    assert.equal(wrong.status, 403);
    const copy = await client.post(`${pageOf(COMPONENT, diffed)}/copy`, { version: '1', name: 'csrf copy' }, null);
    assert.equal(copy.status, 403);
    assert.equal(await versionOf(diffed), before);
    const names = ((await api('GET', CONFIGS)) as unknown as Json[]).map((c) => c.name);
    assert.ok(!names.includes('csrf copy'));
  });

  it('pages 100 configurations at a time, by component then id; a component link narrows the list', async () => {
    for (let i = 0; i < 100; i++)
      await api('POST', CONFIGS, { name: `bulk ${i}`, configurationId: `bulk-${String(i).padStart(3, '0')}` });
    const all = (await api('GET', '/v2/storage/branch/default/components')) as Json[];
    const total = all.reduce((n, c) => n + (c.configurations as Json[]).length, 0);
    assert.ok(total > 100, `${total} configurations`);
    const first = await get('/console/configurations');
    const listed = (html: string) => (html.match(/<tr>\s*<td><a href="\/console\/configurations\//g) ?? []).length;
    assert.equal(listed(first.html), 100);
    assert.match(text(first.html), new RegExp(`Page 1 of 2 · ${total} configurations`));
    assert.match(first.html, /href="\/console\/configurations\?page=2" rel="next">Next</);
    assert.ok(rowOf(first.html, COMPONENT, 'bulk-000'), 'ordered by component, then id');
    const second = await get('/console/configurations?page=2');
    assert.equal(listed(second.html), total - 100);
    assert.match(second.html, /rel="prev">Previous</);
    assert.ok(!second.html.includes('rel="next"'));
    assert.match(second.html, /keboola\.scheduler/, 'the next component on the next page');
    const beyond = await get('/console/configurations?page=99');
    assert.equal(beyond.status, 200);
    assert.match(beyond.html, /There is no such page\./);
    const narrowed = await get('/console/configurations?component=keboola.scheduler');
    assert.equal(listed(narrowed.html), 1);
    assert.ok(!narrowed.html.includes('bulk-000'));
    const hostile = await get(`/console/configurations?component=${encodeURIComponent(HOSTILE)}`);
    assert.equal(hostile.status, 200);
    assert.ok(!hostile.html.includes(HOSTILE), 'the filter is shown escaped');
    assert.match(hostile.html, /This component has no configurations\./);
  });

  it('shows no secret and no cipher in any page', async () => {
    // every version of the configuration with secrets, too
    for (let v = 1; v <= 5; v++) await get(`${pageOf(COMPONENT, rowed)}?version=${v}`);
    assert.ok(seen.length > 20, `pages looked at: ${seen.length}`);
    const stored = await api('GET', `${CONFIGS}/${rowed}`);
    assert.match(stored.configuration.parameters['#password'], /^KBC::/, 'the store keeps a cipher');
    for (const page of seen) {
      for (const secret of SECRETS) assert.ok(!page.html.includes(secret), `a secret in a page`);
      assert.ok(!page.html.includes('KBC::'), 'a cipher in a page');
    }
  });
});
