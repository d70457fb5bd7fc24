import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runGex, startServe } from '../../support/cli.js';
import { consoleLogin } from '../../support/console.js';
import { ConsoleSessions } from '../../../src/server/console/console-sessions.js';

const KEY = { GEX_MASTER_KEY: '6e'.repeat(32) };

/** Issue 36 items 1, 2 and 4 over plain HTTP on a real gex serve: login, the session, CSRF, headers. */
describe('console: login, session, CSRF, headers', function () {
  this.timeout(60_000);
  let dir: string;
  let store: string;
  let served: { child: ChildProcess; url: string; output: () => string };
  let token: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-console-'));
    store = path.join(dir, 'store.sqlite');
    const made = await runGex(['tokens', 'create', '--description', 'ci', '--store', store], KEY);
    assert.equal(made.code, 0, made.stderr);
    token = made.stdout.trim();
    served = await startServe(['--store', store, '--workers', '0'], KEY);
  });
  after(async () => {
    served?.child.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  });

  it('GET / leads to the console; without a session a page leads to the login form', async () => {
    const root = await fetch(`${served.url}/`, { redirect: 'manual' });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/console');
    const jobs = await fetch(`${served.url}/console/jobs`, { redirect: 'manual' });
    assert.equal(jobs.status, 303);
    assert.equal(jobs.headers.get('location'), '/console/login');
    const login = await (await fetch(`${served.url}/console/login`)).text();
    assert.match(login, /<label for="token">Storage token<\/label>/);
    assert.match(login, /<button type="submit">Log in<\/button>/);
  });

  it('logs in with a token into an HttpOnly SameSite=Strict cookie; the token is nowhere in a page, URL or log', async () => {
    const login = await fetch(`${served.url}/console/login`, {
      method: 'POST',
      body: new URLSearchParams({ token }),
      redirect: 'manual',
    });
    assert.equal(login.status, 303);
    const cookie = login.headers.get('set-cookie') ?? '';
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    assert.match(cookie, /Path=\/console/);
    assert.ok(!cookie.includes(token));
    const client = await consoleLogin(served.url, token);
    const page = await client.get('/console/jobs');
    assert.equal(page.status, 200);
    assert.ok(!page.html.includes(token), 'the token is not in the page');
    assert.match(page.html, /Project default/);
    assert.match(page.html, /Token may change things/);
    assert.ok(!served.output().includes(token), 'nor in the log');
    assert.ok(!served.output().includes(client.cookie.split('=')[1]), 'nor the session cookie');
  });

  it('a wrong token: 401 with the form again, nothing set', async () => {
    const wrong = await fetch(`${served.url}/console/login`, {
      method: 'POST',
      body: new URLSearchParams({ token: 'not-a-token' }),
      redirect: 'manual',
    });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers.get('set-cookie'), null);
    assert.match(await wrong.text(), /not valid/);
  });

  it('every answer carries a CSP without inline scripts; assets are served by gex', async () => {
    const client = await consoleLogin(served.url, token);
    const page = await client.get('/console/jobs');
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    for (const asset of page.html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)) {
      const got = await fetch(`${served.url}${asset[1]}`);
      assert.equal(got.status, 200, asset[1]);
    }
    assert.doesNotMatch(page.html, /<script>|<script [^>]*>[^<]/, 'no inline script');
    assert.doesNotMatch(page.html, /https?:\/\/(?!127\.0\.0\.1)/, 'nothing from elsewhere');
  });

  it('a POST without the CSRF token, with another one, or from another site: 403 and nothing changes', async () => {
    const client = await consoleLogin(served.url, token);
    assert.equal((await client.post('/console/logout', {}, null)).status, 403);
    assert.equal((await client.post('/console/logout', {}, 'x'.repeat(43))).status, 403);
    const crossSite = await fetch(`${served.url}/console/logout`, {
      method: 'POST',
      headers: { cookie: client.cookie, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      body: new URLSearchParams({ csrf: client.csrf }),
      redirect: 'manual',
    });
    assert.equal(crossSite.status, 403);
    assert.equal((await client.get('/console/jobs')).status, 200, 'still logged in');
    const out = await client.post('/console/logout');
    assert.equal(out.status, 303);
    assert.equal((await client.get('/console/jobs')).status, 303, 'logged out');
  });

  it('a revoked token ends its sessions', async () => {
    const made = await runGex(['tokens', 'create', '--description', 'short-lived', '--store', store], KEY);
    const shortLived = made.stdout.trim();
    const client = await consoleLogin(served.url, shortLived);
    assert.equal((await client.get('/console/jobs')).status, 200);
    const id = /^\d+-(\d+)-/.exec(shortLived)?.[1];
    const revoked = await runGex(['tokens', 'revoke', id!, '--store', store], KEY);
    assert.equal(revoked.code, 0, revoked.stderr);
    const after = await client.get('/console/jobs');
    assert.equal(after.status, 303);
    assert.equal(after.headers.get('location'), '/console/login');
  });

  it('sessions end by age and idleness, and their number is bounded (injected clock)', () => {
    let now = 0;
    const sessions = new ConsoleSessions({ lifetimeMs: 10_000, idleMs: 3000, max: 2 }, () => now);
    const a = sessions.create('a');
    now = 2000;
    assert.ok(sessions.get(a.id), 'used within its idle time');
    now = 4000;
    assert.ok(sessions.get(a.id));
    now = 7500;
    assert.equal(sessions.get(a.id), undefined, 'idle too long');
    const b = sessions.create('b');
    for (let t = 8000; t < 18_000; t += 2000) {
      now = t;
      sessions.get(b.id);
    }
    now = 18_000;
    assert.equal(sessions.get(b.id), undefined, 'past its lifetime');
    const [c, d, e] = [sessions.create('c'), sessions.create('d'), sessions.create('e')];
    assert.equal(sessions.size, 2);
    assert.equal(sessions.get(c.id), undefined, 'the least recently used ended first');
    assert.ok(sessions.get(d.id) && sessions.get(e.id));
  });
});
