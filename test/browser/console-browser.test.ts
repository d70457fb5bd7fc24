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
/** the API answers each iteration's request after this long: the job runs for minutes unless killed */
const ITERATION_MS = 700;
/** GEX_CONSOLE_SCREENSHOTS=1 writes the screenshots into docs/console/ (committed); else a temp folder */
const KEEP = process.env.GEX_CONSOLE_SCREENSHOTS === '1';

/**
 * Issue 36's console in a real browser: Debian's chromium driven by playwright-core against a real
 * `gex serve --workers 1` whose job calls a slow local API. Logs in, sees the running job, watches its
 * log grow without a reload, kills it, runs it again and logs out; each step a screenshot. Every
 * page: no console error, no request off the machine, a hostile configuration name shown as text.
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
    const configuration = {
      parameters: {
        api: { baseUrl: `${api.url}/v1/` },
        iterations: Array.from({ length: 300 }, (_, i) => ({ n: i })),
        config: { outputBucket: 'slow', jobs: [{ endpoint: 'users', dataField: 'data' }] },
      },
    };
    const created = await call(served.url, token, 'POST', CONFIGS, { name: HOSTILE, configuration });
    assert.equal(created.status, 201, JSON.stringify(created.body));
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
    const deadline = Date.now() + 30_000;
    while ((await statusText()) !== 'terminated') {
      assert.ok(Date.now() < deadline, `the job is ${await statusText()} 30 s after Kill`);
      await sleep(250);
      await page.reload();
    }
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

  it('"Log out" ends the session: a page leads to the login form again', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(/\/console\/login$/);
    await page.goto(`${served!.url}/console/jobs`);
    assert.match(page.url(), /\/console\/login$/);
    await page.getByLabel('Storage token').waitFor();
    await shot('logged-out');
  });
});
