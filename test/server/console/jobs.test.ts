import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_BRANCH } from '../../../src/jobs/job-request.js';
import { JobRepository } from '../../../src/jobs/job-repository.js';
import type { EmbeddedBackend } from '../../../src/store/embedded/embedded-backend.js';
import { runGex, startServe } from '../../support/cli.js';
import { consoleLogin, type ConsoleClient } from '../../support/console.js';
import { openEmbeddedStore } from '../../support/open-store.js';
import { call, type Json } from '../../support/queue.js';

const KEY = { GEX_MASTER_KEY: '6e'.repeat(32) };
const COMPONENT = 'ex-generic-v2';
const CONFIGS = `/v2/storage/branch/default/components/${COMPONENT}/configs`;
const HOSTILE = '<img src=x onerror=alert(1)>';
/** jobs made for the paging configuration: more than a page of 50 */
const MANY = 53;

/** The job ids a Jobs list shows, in its order. */
const idsOf = (html: string) =>
  [...html.matchAll(/<td><a href="\/console\/jobs\/(\d+)">\1<\/a><\/td>/g)].map((m) => m[1]);
/** The rows of a page's log. */
const logLines = (html: string) => [...html.matchAll(/<span class="line [a-z]+">.*?<\/span>/g)].map((m) => m[0]);
const markerOf = (html: string) => decodeURIComponent(/marker=([^"&]*)/.exec(html)?.[1] ?? 'none');
const cursorOf = (html: string) => /\/log\?after=(\d+:\d+)/.exec(html)?.[1];

/** Issue 36 item 3, "Jobs" (the list, a job's page and its log, kill and run again), over plain HTTP on a real gex serve. */
describe('console: jobs', function () {
  this.timeout(90_000);
  let dir: string;
  let served: { child: ChildProcess; url: string; output: () => string };
  let token: string;
  let reader: string;
  let stranger: string;
  let client: ConsoleClient;
  let backend: EmbeddedBackend;
  let repo: JobRepository;
  /** the paging configuration and its jobs, oldest first */
  let shop: string;
  let shopJobs: Json[];
  /** a second configuration with one job */
  let other: string;
  let otherJob: Json;
  let projectId: number;

  const api = async (method: string, url: string, body?: unknown, as = token) => {
    const r = await call(served.url, as, method, url, body);
    assert.ok(r.status < 300, `${method} ${url}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const newJob = (config: string) => api('POST', '/jobs', { component: COMPONENT, config });
  const statusOf = async (id: string | number) => String((await api('GET', `/jobs/${id}`)).status);
  const lines = (job: Json, messages: string[]) =>
    repo.appendEvents(
      { id: Number(job.id), projectId },
      messages.map((message) => ({ created: new Date().toISOString(), level: 'info' as const, message })),
    );

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-console-jobs-'));
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
    // the same SQLite file in this process: the test writes job logs as a worker would
    backend = await openEmbeddedStore(store, KEY);
    repo = new JobRepository(backend.db);

    const config = async (name: string) =>
      String((await api('POST', CONFIGS, { name, configuration: { parameters: {} } })).id);
    shop = await config('shop');
    other = await config('other');
    shopJobs = [];
    for (let i = 0; i < MANY; i++) shopJobs.push(await newJob(shop));
    otherJob = await newJob(other);
    projectId = Number(otherJob.project.id);
  });
  after(async () => {
    if (served && served.child.exitCode === null) {
      served.child.kill('SIGTERM');
      await once(served.child, 'exit');
    }
    await backend?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("with no worker a configuration's first job stays created, the ones after it waiting", async () => {
    assert.equal(shopJobs[0].status, 'created');
    assert.equal(shopJobs[1].status, 'waiting');
    assert.equal(otherJob.status, 'created');
    assert.equal(await statusOf(shopJobs[0].id), 'created');
    assert.equal(await statusOf(shopJobs[MANY - 1].id), 'waiting');
  });

  it('lists jobs newest first, 50 a page, each linked to its page; Older and Newer page through them', async () => {
    const first = await client.get('/console/jobs');
    assert.equal(first.status, 200);
    assert.match(first.html, /aria-current="page">Jobs</);
    assert.ok(
      first.html.includes(
        '<thead><tr><th>Job</th><th>Status</th><th>Configuration</th><th>Trigger</th><th>Created</th><th>Duration</th></tr></thead>',
      ),
      first.html,
    );
    const all = [otherJob, ...[...shopJobs].reverse()].map((j) => String(j.id));
    const ids = idsOf(first.html);
    assert.deepEqual(ids, all.slice(0, 50));
    assert.ok(first.html.includes(`<a href="/console/jobs/${otherJob.id}">${otherJob.id}</a>`));
    assert.ok(first.html.includes(`href="/console/configurations/${COMPONENT}/${other}">${COMPONENT} ${other}</a>`));
    assert.match(first.html, /<td>manual<\/td>/);
    assert.ok(!first.html.includes('rel="prev">Newer'), 'no newer page on the first');
    const older = /<a href="([^"]+)" rel="next">Older<\/a>/.exec(first.html)?.[1];
    assert.equal(older, '/console/jobs?&page=2');

    const second = await client.get('/console/jobs?page=2');
    assert.deepEqual(idsOf(second.html), all.slice(50));
    assert.ok(second.html.includes('<a href="/console/jobs?&page=1" rel="prev">Newer</a>'), second.html);
    assert.ok(!second.html.includes('rel="next">Older'), 'the last page has no older one');
    // a page past the end, a bogus page: nothing breaks
    assert.equal(idsOf((await client.get('/console/jobs?page=9')).html).length, 0);
    assert.deepEqual(idsOf((await client.get('/console/jobs?page=-3')).html), all.slice(0, 50));
  });

  it('filters by status, configuration and time; ignores an unknown status; shows a hostile filter escaped', async () => {
    const killed = shopJobs[1];
    assert.ok(await repo.kill(projectId, Number(killed.id)));
    const status = await statusOf(killed.id);
    assert.notEqual(status, 'created');
    const byStatus = await client.get(`/console/jobs?status=${status}`);
    assert.deepEqual(idsOf(byStatus.html), [String(killed.id)]);
    assert.ok(byStatus.html.includes(`<option selected>${status}</option>`), 'the filter shows its status');
    assert.deepEqual(idsOf((await client.get('/console/jobs?status=created')).html), [
      String(otherJob.id),
      String(shopJobs[0].id),
    ]);
    const waiting = await client.get('/console/jobs?status=waiting');
    assert.equal(idsOf(waiting.html).length, 50);
    assert.ok(
      waiting.html.includes('<a href="/console/jobs?status=waiting&page=2" rel="next">Older</a>'),
      'paging keeps the filter',
    );

    const unknown = await client.get('/console/jobs?status=bogus');
    assert.equal(unknown.status, 200);
    assert.equal(idsOf(unknown.html).length, 50, 'an unknown status filters nothing');
    assert.ok(!unknown.html.includes('bogus'));

    const byConfig = await client.get(`/console/jobs?config=${other}`);
    assert.deepEqual(idsOf(byConfig.html), [String(otherJob.id)]);
    assert.ok(byConfig.html.includes(`name="config" value="${other}"`));
    assert.ok(!byConfig.html.includes('rel="next">Older'));

    // a job from 2020, made in-process
    const old = await repo.create(
      {
        projectId,
        componentId: COMPONENT,
        configId: other,
        branchId: DEFAULT_BRANCH,
        mode: 'run',
        parentRunId: '',
        tokenId: Number(otherJob.token.id),
        tokenDescription: String(otherJob.token.description),
        configRowIds: [],
        tag: null,
        orchestrationJobId: null,
        timeoutSeconds: null,
      },
      new Date('2020-01-02T03:04:05Z'),
    );
    assert.deepEqual(idsOf((await client.get(`/console/jobs?config=${other}`)).html), [
      String(old.id),
      String(otherJob.id),
    ]);
    const since = await client.get(`/console/jobs?config=${other}&since=2021-01-01T00:00`);
    assert.deepEqual(idsOf(since.html), [String(otherJob.id)], 'since leaves the 2020 job out');
    assert.ok(since.html.includes('name="since" type="datetime-local" value="2021-01-01T00:00"'));
    const future = await client.get('/console/jobs?since=2999-01-01T00:00');
    assert.equal(idsOf(future.html).length, 0);
    assert.match(future.html, /No jobs match these filters\./);

    const hostile = await client.get(
      `/console/jobs?config=${encodeURIComponent(HOSTILE)}&since=${encodeURIComponent(HOSTILE)}`,
    );
    assert.equal(hostile.status, 200);
    assert.ok(!hostile.html.includes(HOSTILE), 'never as a tag');
    assert.ok(hostile.html.includes('value="&lt;img src=x onerror=alert(1)&gt;"'), 'shown escaped');
    assert.equal(idsOf(hostile.html).length, 0);
  });

  it('refreshes every 3 s while a job is not finished, not once all are', async () => {
    const live = await client.get('/console/jobs');
    assert.match(live.html, /<div id="jobs" hx-get="\/console\/jobs\?&page=1" hx-trigger="every 3s"/);
    const killed = await client.get(`/console/jobs?status=${await statusOf(shopJobs[1].id)}`);
    assert.equal(idsOf(killed.html).length, 1);
    assert.ok(!killed.html.includes('hx-trigger="every 3s"'), 'only finished jobs: no refresh');
    assert.ok(killed.html.includes('<div id="jobs">'));
  });

  it("shows a job's status, configuration and log, escaped", async () => {
    const job = shopJobs[2];
    await lines(job, ['first line', '<script>alert(1)</script>']);
    const page = await client.get(`/console/jobs/${job.id}`);
    assert.equal(page.status, 200);
    assert.match(page.html, new RegExp(`<h1>Job ${job.id} <span class="status waiting">waiting</span></h1>`));
    assert.ok(
      page.html.includes(
        `<dt>Configuration</dt><dd><a href="/console/configurations/${COMPONENT}/${shop}">${COMPONENT} ${shop}</a>`,
      ),
    );
    const log = logLines(page.html);
    assert.equal(log.length, 2);
    assert.ok(log[0].includes('<b>INFO</b> first line'));
    assert.ok(log[1].includes('&lt;script&gt;alert(1)&lt;/script&gt;'), log[1]);
    assert.ok(!page.html.includes('<script>alert(1)'), 'never as a tag');
    assert.ok(page.html.includes('<button type="submit" class="danger">Kill</button>'));
    assert.ok(page.html.includes('<button type="submit">Run again</button>'));
    assert.equal(cursorOf(page.html), `${job.id}:2`);
  });

  it('shows the newest 200 of a long log with an Older link that pages back', async () => {
    const job = shopJobs[3];
    await lines(
      job,
      Array.from({ length: 250 }, (_, i) => `line-${i + 1}-end`),
    );
    const page = await client.get(`/console/jobs/${job.id}`);
    const newest = logLines(page.html);
    assert.equal(newest.length, 200);
    assert.ok(newest[0].includes('line-51-end') && newest[199].includes('line-250-end'));
    assert.ok(!page.html.includes('line-50-end'));
    const older = /<a href="([^"]+)" rel="prev">Older<\/a>/.exec(page.html)?.[1];
    assert.equal(older, `/console/jobs/${job.id}?before=${job.id}:51`);

    const back = await client.get(older);
    const oldest = logLines(back.html);
    assert.equal(oldest.length, 50);
    assert.ok(oldest[0].includes('line-1-end') && oldest[49].includes('line-50-end'));
    assert.ok(!back.html.includes('line-51-end'));
    assert.ok(!back.html.includes('rel="prev">Older'), 'nothing older than the first line');
    assert.ok(back.html.includes(`<a href="/console/jobs/${job.id}">Newest lines</a>`));
    assert.ok(!back.html.includes('hx-trigger="every 2s"'), 'an older page does not follow the log');
  });

  it('the live log fragment answers the lines after its cursor, and 204 while nothing changed', async () => {
    const job = shopJobs[4];
    await lines(job, ['one', 'two']);
    const page = await client.get(`/console/jobs/${job.id}`);
    const marker = markerOf(page.html);
    assert.notEqual(marker, 'none');
    assert.equal(cursorOf(page.html), `${job.id}:2`);
    const poll = (after: string, m: string) =>
      client.get(`/console/jobs/${job.id}/log?after=${after}&marker=${encodeURIComponent(m)}`);

    const idle = await poll(`${job.id}:2`, marker);
    assert.equal(idle.status, 204, idle.html);
    assert.equal(idle.html, '');

    await lines(job, ['three <b>bold</b>']);
    const fresh = await poll(`${job.id}:2`, marker);
    assert.equal(fresh.status, 200);
    const got = logLines(fresh.html);
    assert.equal(got.length, 1, fresh.html);
    assert.ok(got[0].includes('three &lt;b&gt;bold&lt;/b&gt;'));
    assert.ok(!fresh.html.includes('<b>bold'));
    assert.equal(cursorOf(fresh.html), `${job.id}:3`);
    assert.ok(fresh.html.includes('<div id="job-head" hx-swap-oob="true">'), 'the heading follows');
    const next = markerOf(fresh.html);
    assert.notEqual(next, marker);
    assert.equal((await poll(`${job.id}:3`, next)).status, 204, 'nothing new again');
    // from the start, without a marker: every line
    assert.equal(logLines((await client.get(`/console/jobs/${job.id}/log?after=${job.id}:0`)).html).length, 3);
  });

  it('kills a job with the CSRF token; without it: 403 and the job unchanged', async () => {
    const job = shopJobs[5];
    const page = await client.get(`/console/jobs/${job.id}`);
    assert.ok(page.html.includes(`action="/console/jobs/${job.id}/kill"`));
    const forged = await client.post(`/console/jobs/${job.id}/kill`, {}, null);
    assert.equal(forged.status, 403);
    const wrong = await client.post(`/console/jobs/${job.id}/kill`, {}, 'not-the-token');
    assert.equal(wrong.status, 403);
    assert.equal(await statusOf(job.id), 'waiting', 'unchanged');

    const killed = await client.post(`/console/jobs/${job.id}/kill`);
    assert.equal(killed.status, 303, killed.html);
    assert.equal(killed.headers.get('location'), `/console/jobs/${job.id}`);
    const after = await api('GET', `/jobs/${job.id}`);
    // with no worker a job not yet started ends at once
    assert.equal(after.status, 'cancelled');
    assert.equal(after.isFinished, true);
    const shown = await client.get(`/console/jobs/${job.id}`);
    assert.match(shown.html, /<span class="status cancelled">cancelled<\/span><\/h1>/);
    assert.ok(!shown.html.includes('class="danger">Kill'), 'no Kill button once finished');
    // killing it again: an error page, not a crash
    const again = await client.post(`/console/jobs/${job.id}/kill`);
    assert.equal(again.status, 400);
  });

  it('Run again makes a new job of the same configuration and leads to its page', async () => {
    const job = shopJobs[6];
    const before = Number(idsOf((await client.get('/console/jobs')).html)[0]);
    const run = await client.post(`/console/jobs/${job.id}/run`);
    assert.equal(run.status, 303, run.html);
    const location = run.headers.get('location') ?? '';
    const id = /^\/console\/jobs\/(\d+)$/.exec(location)?.[1];
    assert.ok(id, location);
    assert.ok(Number(id) > before, 'a new job');
    const made = await api('GET', `/jobs/${id}`);
    assert.equal(made.config, shop);
    assert.equal(made.component, COMPONENT);
    assert.equal(made.status, 'waiting', 'behind the jobs of its configuration');
    assert.equal((await client.get(location)).status, 200);
    assert.equal((await client.post(`/console/jobs/${job.id}/run`, {}, null)).status, 403, 'not without CSRF');
  });

  it("another project's token sees 404 pages for the job, its log and its kill; unknown and malformed ids are 404", async () => {
    const job = shopJobs[7];
    const other = await consoleLogin(served.url, stranger);
    assert.deepEqual(idsOf((await other.get('/console/jobs')).html), [], 'no job of another project listed');
    const page = await other.get(`/console/jobs/${job.id}`);
    assert.equal(page.status, 404);
    assert.match(page.html, /There is no such job/);
    assert.ok(!page.html.includes(`${COMPONENT} ${shop}`));
    const log = await other.get(`/console/jobs/${job.id}/log?after=${job.id}:0`);
    assert.equal(log.status, 404);
    // the change marker is the store's, not a job's (a stranger reads the same on its own jobs' pages):
    // polling with it answers the same for this job as for one that does not exist
    const mark = markerOf((await client.get(`/console/jobs/${job.id}`)).html);
    assert.notEqual(mark, 'none');
    const polled = await other.get(`/console/jobs/${job.id}/log?after=${job.id}:0&marker=${encodeURIComponent(mark)}`);
    const none = await other.get(`/console/jobs/999999/log?after=999999:0&marker=${encodeURIComponent(mark)}`);
    assert.equal(polled.status, none.status, 'no oracle of which ids exist');
    assert.equal(polled.html, none.html);
    const kill = await other.post(`/console/jobs/${job.id}/kill`);
    assert.equal(kill.status, 404);
    assert.equal((await other.post(`/console/jobs/${job.id}/run`)).status, 404);
    assert.equal(await statusOf(job.id), 'waiting', 'unchanged');

    for (const id of ['999999', 'abc', '1e5', '-1', '12345678901234567890']) {
      const missing = await client.get(`/console/jobs/${id}`);
      assert.equal(missing.status, 404, id);
      assert.match(missing.html, /<html/, `${id}: a page`);
      assert.equal((await client.get(`/console/jobs/${id}/log`)).status, 404, id);
    }
  });

  it('a read-only token sees no Kill nor Run again; its POSTs are 403', async () => {
    const job = shopJobs[8];
    const viewer = await consoleLogin(served.url, reader);
    const page = await viewer.get(`/console/jobs/${job.id}`);
    assert.equal(page.status, 200);
    assert.match(page.html, new RegExp(`<h1>Job ${job.id} `));
    assert.ok(!page.html.includes('>Kill</button>'));
    assert.ok(!page.html.includes('>Run again</button>'));
    assert.ok(!page.html.includes(`action="/console/jobs/${job.id}/kill"`));
    assert.equal((await viewer.post(`/console/jobs/${job.id}/kill`)).status, 403);
    assert.equal((await viewer.post(`/console/jobs/${job.id}/run`)).status, 403);
    assert.equal(await statusOf(job.id), 'waiting');
  });
});
