import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { repoRoot, runGex, startServe } from '../support/cli.js';
import { call, untilJob, type Json } from '../support/queue.js';

const KEY = { GEX_MASTER_KEY: '6c'.repeat(32) };
const CONFIGS = '/v2/storage/branch/default/components/ex-generic-v2/configs';
const CHROMIUM = '/usr/bin/chromium';
const HOSTILE = '<img src=x onerror=alert(1)>';
const SCRIPT_CELL = '<script>alert(1)</script>';
const STORAGE = '/v2/storage';
/** the configuration's output bucket in versions 1, 2 and 3 (the diff and the rollback look for them) */
const BUCKETS = ['slow', 'second', 'third'];
/** the API answers each iteration's request after this long: the job runs for minutes unless killed */
const ITERATION_MS = 700;
/** GEX_CONSOLE_SCREENSHOTS=1 writes the screenshots into docs/console/ (committed); else a temp folder */
const KEEP = process.env.GEX_CONSOLE_SCREENSHOTS === '1';

/** A Storage job's end (polled every 50 ms); fails unless it succeeded. */
async function storageJob(url: string, token: string, started: { status: number; body: Json }): Promise<Json> {
  assert.equal(started.status, 202, JSON.stringify(started.body));
  const end = Date.now() + 30_000;
  for (;;) {
    const got = (await call(url, token, 'GET', `${STORAGE}/jobs/${started.body.id}`)).body;
    if (got.status === 'success') return got;
    assert.notEqual(got.status, 'error', JSON.stringify(got));
    assert.ok(Date.now() < end, `Storage job ${started.body.id}: ${JSON.stringify(got)}`);
    await sleep(50);
  }
}

/** Table in.c-shop.users through the Storage API (a file uploaded, a table made of it); hostile cells. */
async function makeTable(url: string, token: string): Promise<void> {
  const bucket = await call(url, token, 'POST', `${STORAGE}/buckets`, { name: 'shop', stage: 'in' });
  assert.equal(bucket.status, 201, JSON.stringify(bucket.body));
  const prepared = await call(url, token, 'POST', `${STORAGE}/files/prepare`, { name: 'users.csv' });
  assert.equal(prepared.status, 200, JSON.stringify(prepared.body));
  const csv = ['id,name,note', '1,Ann,plain', `2,Bob,${SCRIPT_CELL}`, `3,Bob,${HOSTILE}`, '4,Cid,x', ''].join('\n');
  const put = await fetch(prepared.body.uploadParams.url, {
    method: 'PUT',
    headers: { 'X-StorageApi-Token': token, 'Content-Type': 'text/csv' },
    body: csv,
  });
  assert.equal(put.status, 200, await put.text());
  const started = await call(url, token, 'POST', `${STORAGE}/buckets/in.c-shop/tables-async`, {
    name: 'users',
    dataFileId: prepared.body.id,
    primaryKey: 'id',
  });
  await storageJob(url, token, started);
}

/**
 * Issue 36's console in a real browser: Debian's chromium driven by playwright-core against a real
 * `gex serve --workers 1` whose job calls a slow local API. Logs in, sees the running job, watches its
 * log grow without a reload, kills it, runs it again, diffs a configuration's versions and rolls one
 * back, filters a table's rows, disables and enables a schedule, and logs out; each step a
 * screenshot. Every page: no console error, no request off the machine, hostile names shown as text.
 * More pages' steps go in further `it`s on the same browser (they share the logged-in page).
 */
describe('console in a real browser (chromium, playwright-core)', function () {
  this.timeout(180_000);
  let dir: string;
  let shots: string;
  let api: FixtureServer;
  let served: { child: ChildProcess; url: string } | undefined;
  let token: string;
  let browser: Browser | undefined;
  let context: BrowserContext;
  let page: Page;
  let job: Json;
  let configId: string;
  let scheduleId: string;
  const problems: string[] = [];
  const dialogs: string[] = [];
  const requests: string[] = [];

  /** a screenshot of the page as this step left it; always taken, kept in docs/console/ on demand */
  const shot = async (name: string) => {
    const file = path.join(shots, `${name}.png`);
    await page.screenshot({ path: file });
    assert.ok((await stat(file)).size > 5_000, `${name}.png rendered`);
  };
  const statusText = () => page.locator('h1 .status').innerText();
  /** the diff's lines of one kind, their indentation squeezed to one space */
  const diffLines = async (kind: 'added' | 'removed') =>
    (await page.locator(`pre.diff span.${kind}`).allInnerTexts()).map((line) => line.trim().replace(/\s+/g, ' '));

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      console.warn(`SKIPPED: the console's browser tests: no ${CHROMIUM} (apt-get install chromium)`);
      this.skip();
    }
    let playwright: typeof import('playwright-core');
    try {
      playwright = await import('playwright-core');
    } catch {
      console.warn("SKIPPED: the console's browser tests: playwright-core is not installed (npm ci)");
      this.skip();
    }
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-console-browser-'));
    shots = KEEP ? path.join(repoRoot, 'docs', 'console') : path.join(dir, 'shots');
    await mkdir(shots, { recursive: true });
    const store = path.join(dir, 'store.sqlite');
    api = await startFixtureServer({
      handler: async () => {
        await sleep(ITERATION_MS);
        return { body: { data: [{ id: 1, name: 'a user' }] } };
      },
    });
    const made = await runGex(['tokens', 'create', '--description', 'console browser test', '--store', store], KEY);
    assert.equal(made.code, 0, made.stderr);
    token = made.stdout.trim();
    served = await startServe(['--store', store, '--workers', '1'], KEY);
    const configuration = (bucket: string) => ({
      parameters: {
        api: { baseUrl: `${api.url}/v1/` },
        iterations: Array.from({ length: 300 }, (_, i) => ({ n: i })),
        config: { outputBucket: bucket, jobs: [{ endpoint: 'users', dataField: 'data' }] },
      },
    });
    const created = await call(served.url, token, 'POST', CONFIGS, {
      name: HOSTILE,
      configuration: configuration(BUCKETS[0]),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    configId = String(created.body.id);
    // versions 2 and 3, each with another output bucket: the configuration's page diffs and rolls them back
    for (const bucket of BUCKETS.slice(1)) {
      const updated = await call(served.url, token, 'PUT', `${CONFIGS}/${configId}`, {
        configuration: configuration(bucket),
        changeDescription: `output to ${bucket}`,
      });
      assert.equal(updated.status, 200, JSON.stringify(updated.body));
    }
    assert.equal((await call(served.url, token, 'GET', `${CONFIGS}/${configId}`)).body.version, 3);
    await makeTable(served.url, token);
    // a yearly schedule of the configuration (it does not fire during the test)
    const scheduler = await call(
      served.url,
      token,
      'POST',
      '/v2/storage/branch/default/components/keboola.scheduler/configs',
      {
        name: 'yearly',
        configuration: {
          schedule: { cronTab: '0 4 1 1 *', timezone: 'UTC', state: 'enabled' },
          target: { componentId: 'ex-generic-v2', configurationId: configId, mode: 'run' },
        },
      },
    );
    assert.equal(scheduler.status, 201, JSON.stringify(scheduler.body));
    const activated = await call(served.url, token, 'POST', '/schedules', {
      configurationId: String(scheduler.body.id),
    });
    assert.equal(activated.status, 201, JSON.stringify(activated.body));
    scheduleId = String(activated.body.id);
    const queued = await call(served.url, token, 'POST', '/jobs', {
      component: 'ex-generic-v2',
      config: created.body.id,
    });
    assert.equal(queued.status, 201, JSON.stringify(queued.body));
    job = await untilJob(served.url, token, String(queued.body.id), 30_000, (j) => j.status === 'processing');

    browser = await playwright.chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-background-networking', '--disable-component-update'],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    const origin = new URL(served.url).origin;
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error at ${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error at ${page.url()}: ${error.message}`));
    page.on('request', (request) => requests.push(request.url()));
    page.on('dialog', (dialog) => {
      dialogs.push(`${dialog.type()}: ${dialog.message()}`);
      void (dialog.type() === 'confirm' ? dialog.accept() : dialog.dismiss());
    });
    // a request for anything but the gex server fails here, before it could leave the machine
    await context.route(
      (url) => url.origin !== origin,
      (route) => route.abort(),
    );
  });

  afterEach(function () {
    if (!page) return;
    assert.deepEqual(problems, [], 'no console errors, no page errors');
    const origin = new URL(served!.url).origin;
    const away = requests.filter((url) => new URL(url).origin !== origin);
    assert.deepEqual(away, [], 'every request goes to the gex server');
    assert.ok(requests.length > 0);
    assert.deepEqual(
      dialogs.filter((d) => !d.startsWith('confirm')),
      [],
      'no alert fired',
    );
  });

  after(async () => {
    await browser?.close();
    served?.child.kill('SIGTERM');
    await api?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('logs in with the field labelled "Storage token" and the "Log in" button', async () => {
    await page.goto(`${served!.url}/`);
    assert.match(page.url(), /\/console\/login$/);
    await page.getByLabel('Storage token').fill(token);
    await shot('login');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/console\/jobs$/);
    assert.ok(!page.url().includes(token), 'the token is not in the URL');
    assert.ok(!(await page.content()).includes(token), 'nor in the page');
    const cookies = await context.cookies();
    assert.ok(cookies.length > 0);
    for (const cookie of cookies) {
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.sameSite, 'Strict');
      assert.ok(!cookie.value.includes(token));
    }
  });

  it('the Jobs list shows the running job', async () => {
    assert.deepEqual(await page.locator('table.list thead th').allInnerTexts(), [
      'Job',
      'Status',
      'Configuration',
      'Trigger',
      'Created',
      'Duration',
    ]);
    const row = page.locator('table.list tbody tr', { has: page.getByRole('link', { name: String(job.id) }) });
    assert.equal(await row.locator('.status').innerText(), 'processing');
    assert.equal(await row.locator('td').nth(3).innerText(), 'manual');
    await shot('jobs');
  });

  it("opens the job and watches its log grow live, without a reload; the configuration's hostile name is text", async () => {
    await page.getByRole('link', { name: String(job.id), exact: true }).click();
    await page.waitForURL(new RegExp(`/console/jobs/${job.id}$`));
    assert.equal(await statusText(), 'processing');
    const lines = page.locator('#log .line');
    await lines.first().waitFor();
    const before = await lines.count();
    await page.evaluate(() => Object.assign(globalThis, { gexNotReloaded: true }));
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    const deadline = Date.now() + 30_000;
    while ((await lines.count()) < before + 3) {
      assert.ok(Date.now() < deadline, `the log did not grow from ${before} lines in 30 s`);
      await sleep(200);
    }
    const after = await lines.count();
    assert.equal(await page.evaluate(() => (globalThis as { gexNotReloaded?: boolean }).gexNotReloaded), true);
    assert.equal(navigations, 0, 'the page was not reloaded');
    assert.ok(after > before, `${before} → ${after} lines`);
    assert.match(await lines.last().innerText(), /Iteration \d+ of 300|Job 'users'/);
    // the name as text in the log's first line; no element made of it, no dialog
    await page.getByText(`Configuration ${job.config} "${HOSTILE}"`).waitFor();
    assert.equal(await page.locator('img').count(), 0);
    assert.equal(await page.title(), `Job ${job.id} · gex`);
    await shot('job-log');
  });

  it('"Kill" ends the job terminated', async () => {
    await page.getByRole('button', { name: 'Kill' }).click();
    await page.waitForURL(new RegExp(`/console/jobs/${job.id}$`));
    // the heading follows the job live (the log's fragments carry it): no reload
    const deadline = Date.now() + 30_000;
    while ((await statusText()) !== 'terminated') {
      assert.ok(Date.now() < deadline, `the job is ${await statusText()} 30 s after Kill`);
      await sleep(250);
    }
    await page.getByText('The job was killed').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Kill' }).count(), 0, 'no Kill on an ended job');
    const killed = (await call(served!.url, token, 'GET', `/jobs/${job.id}`)).body;
    assert.equal(killed.status, 'terminated');
    await shot('job-killed');
  });

  it('"Run again" starts a new job of the same configuration', async () => {
    await page.getByRole('button', { name: 'Run again' }).click();
    await page.waitForURL((url) => /\/console\/jobs\/\d+$/.test(url.pathname) && !url.pathname.endsWith(`/${job.id}`));
    const again = page.url().split('/').at(-1)!;
    assert.ok(Number(again) > Number(job.id));
    assert.match(await statusText(), /^(created|waiting|processing)$/);
    assert.match(await page.locator('dl.facts').innerText(), new RegExp(`ex-generic-v2 ${job.config}`));
    await shot('job-run-again');
    const killed = await call(served!.url, token, 'POST', `/jobs/${again}/kill`);
    assert.ok([200, 202].includes(killed.status), JSON.stringify(killed.body));
  });

  it('a configuration\'s older version against the one before it, and "Rollback" to it', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Configurations' }).click();
    await page.waitForURL(/\/console\/configurations$/);
    await page.getByRole('link', { name: HOSTILE, exact: true }).click();
    await page.waitForURL(new RegExp(`/console/configurations/ex-generic-v2/${configId}$`));
    assert.equal(await page.locator('h1').evaluate((h) => h.firstChild?.textContent?.trim()), HOSTILE);
    assert.equal(await page.locator('img').count(), 0, 'the name made no element');
    const versions = page.locator('table.versions tbody tr');
    assert.deepEqual(await versions.locator('td:first-child').allInnerTexts(), ['3', '2', '1']);
    assert.equal(await versions.nth(1).locator('td').nth(2).innerText(), `output to ${BUCKETS[1]}`);
    await versions.nth(1).getByRole('link', { name: '2', exact: true }).click();
    await page.waitForURL(/\?version=2$/);
    await page.getByRole('heading', { name: 'Version 2 against version 1' }).waitFor();
    const diff = page.locator('pre.diff');
    assert.deepEqual(await diffLines('removed'), [`- "outputBucket": "${BUCKETS[0]}",`]);
    assert.deepEqual(await diffLines('added'), [`+ "outputBucket": "${BUCKETS[1]}",`]);
    assert.equal(await page.getByRole('button', { name: 'Run', exact: true }).count(), 1);
    assert.equal(await page.getByRole('button', { name: 'Copy version 2' }).count(), 1);
    await diff.locator('span.removed').evaluate((line) => line.scrollIntoView({ block: 'center' }));
    await shot('configuration-diff');

    await page.getByRole('button', { name: 'Rollback to version 2' }).click();
    await page.waitForURL(/\?version=4$/);
    const now = (await call(served!.url, token, 'GET', `${CONFIGS}/${configId}`)).body;
    assert.equal(now.version, 4);
    assert.equal(now.configuration.parameters.config.outputBucket, BUCKETS[1]);
    assert.equal(now.name, HOSTILE);
    const facts = page.locator('dl.facts');
    assert.equal(await facts.locator('dt:has-text("Version") + dd').innerText(), '4');
    assert.match(await page.locator('pre.json').first().innerText(), new RegExp(`"outputBucket": "${BUCKETS[1]}"`));
    assert.deepEqual(await versions.locator('td:first-child').allInnerTexts(), ['4', '3', '2', '1']);
    assert.equal(await versions.first().locator('td').nth(2).innerText(), 'Rollback to version 2');
    await page.getByRole('heading', { name: 'Version 4 against version 3' }).waitFor();
    assert.deepEqual(await diffLines('removed'), [`- "outputBucket": "${BUCKETS[2]}",`]);
    assert.deepEqual(await diffLines('added'), [`+ "outputBucket": "${BUCKETS[1]}",`]);
    assert.equal(
      await page.getByRole('button', { name: /^Rollback/ }).count(),
      0,
      'no rollback to the current version',
    );
    // the versions, the new one first, at the top of the screenshot
    await page.locator('table.versions').evaluate((table) => table.scrollIntoView({ block: 'start' }));
    await shot('configuration-rolled-back');
  });

  it("a table's first rows, filtered by a column's value; hostile cells are text", async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Tables' }).click();
    await page.waitForURL(/\/console\/tables$/);
    await page.getByRole('link', { name: 'users', exact: true }).click();
    await page.waitForURL(/\/console\/tables\/in\.c-shop\.users$/);
    const rows = page.locator('table.preview tbody tr');
    assert.equal(await rows.count(), 4);
    await page.getByLabel('Column').selectOption('name');
    await page.getByLabel('equals').fill('Bob');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/\?column=name&value=Bob$/);
    assert.deepEqual(await page.locator('table.preview thead th').allInnerTexts(), ['id', 'name', 'note']);
    const cells = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    assert.deepEqual(
      cells.sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      [
        ['2', 'Bob', SCRIPT_CELL],
        ['3', 'Bob', HOSTILE],
      ],
    );
    assert.equal(await page.locator('main img, main script').count(), 0, 'no cell made an element');
    assert.equal(await page.getByLabel('Column').inputValue(), 'name');
    assert.equal(await page.getByLabel('equals').inputValue(), 'Bob');
    await page.getByText('2 rows shown where name equals “Bob”.').waitFor();
    await shot('table-preview');
  });

  it('"Disable" a schedule, then "Enable" it again', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Schedules' }).click();
    await page.waitForURL(/\/console\/schedules$/);
    const row = page.locator('table.schedules tbody tr', {
      has: page.getByRole('link', { name: `ex-generic-v2 ${configId}`, exact: true }),
    });
    assert.equal(await row.count(), 1);
    assert.equal(await row.locator('code').innerText(), '0 4 1 1 *');
    assert.equal(await row.locator('.state').innerText(), 'enabled');
    assert.equal(await row.locator('time').count(), 1, 'a next run');
    const wire = async () => (await call(served!.url, token, 'GET', `/schedules/${scheduleId}`)).body;

    await row.getByRole('button', { name: 'Disable' }).click();
    await row.getByRole('button', { name: 'Enable' }).waitFor();
    assert.match(page.url(), /\/console\/schedules$/);
    assert.equal(await row.locator('.state').innerText(), 'disabled');
    assert.equal(await row.locator('time').count(), 0, 'no next run while disabled');
    assert.equal((await wire()).schedule.state, 'disabled');
    await shot('schedule-disabled');

    await row.getByRole('button', { name: 'Enable' }).click();
    await row.getByRole('button', { name: 'Disable' }).waitFor();
    assert.equal(await row.locator('.state').innerText(), 'enabled');
    assert.equal(await row.locator('time').count(), 1);
    assert.equal((await wire()).schedule.state, 'enabled');
  });

  it('"Log out" ends the session: a page leads to the login form again', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(/\/console\/login$/);
    await page.goto(`${served!.url}/console/jobs`);
    assert.match(page.url(), /\/console\/login$/);
    await page.getByLabel('Storage token').waitFor();
    await shot('logged-out');
  });
});
