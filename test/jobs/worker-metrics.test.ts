import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { runGex, startServe } from '../support/cli.js';
import { tagConfigs } from '../support/flow-setup.js';
import { figure, parseExposition, type Sample } from '../support/prometheus-text.js';
import { call, startWorker, untilFinished } from '../support/queue.js';
import { postgresBackend, TEST_KEY, type FreshStore } from '../support/store.js';

/** An API on 127.0.0.1 answering `status` (200: one record) to every request. */
async function api(status: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(status === 200 ? '{"data":[{"id":1}]}' : '{"error":"down"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function scrape(url: string): Promise<Sample[]> {
  const response = await fetch(`${url}/metrics`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parseExposition(await response.text());
}

/** `gex worker --metrics-listen` as a real process beside a `gex serve` on one PostgreSQL store. */
describe('gex worker --metrics-listen: job metrics of a real worker', function () {
  this.timeout(120_000);
  const children: ChildProcess[] = [];
  const closing: Array<() => Promise<void>> = [];
  let fresh: FreshStore | undefined;

  before(async function () {
    const factory = postgresBackend();
    if (!factory) {
      console.warn('\n  !!! SKIPPED: gex worker needs a PostgreSQL store (GEX_TEST_POSTGRES)\n');
      return this.skip();
    }
    fresh = await factory.fresh();
  });
  after(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
    for (const close of closing.splice(0)) await close();
    await fresh?.dispose();
  });

  it('serves job and process metrics on its own address; the jobs it ran, figure by figure; gex serve reports the same queue', async () => {
    const store = fresh!.location;
    const made = await runGex(['tokens', 'create', '--description', 'ci', '--store', store], TEST_KEY);
    assert.equal(made.code, 0, made.stderr);
    const token = made.stdout.trim();
    const served = await startServe(['--store', store, '--workers', '0'], TEST_KEY);
    children.push(served.child);
    const worker = await startWorker(store, TEST_KEY, ['--metrics-listen', '127.0.0.1:0']);
    children.push(worker.child);
    const listening = /Metrics listening on (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(worker.output());
    assert.ok(listening, worker.output());
    const url = listening[1];

    let samples = await scrape(url);
    assert.equal(figure(samples, 'gex_workers_idle'), 1, '--concurrency 1: one free slot');
    assert.equal(figure(samples, 'gex_workers_busy'), 0);
    assert.equal(figure(samples, 'gex_jobs_waiting'), 0);
    assert.ok((figure(samples, 'process_cpu_user_seconds_total') ?? -1) >= 0, 'the process metrics are there');
    assert.ok(figure(samples, 'nodejs_eventloop_lag_p99_seconds') !== undefined);
    assert.equal(
      samples.some((s) => s.name.startsWith('gex_http_')),
      false,
      'a worker serves no API',
    );

    const good = await api(200);
    const bad = await api(404);
    closing.push(good.close, bad.close);
    const { a } = await tagConfigs(served.url, token, good.url, ['a'], 'in.c-good');
    const { b } = await tagConfigs(served.url, token, bad.url, ['b'], 'in.c-bad');
    const ids: string[] = [];
    for (const config of [a, a, b]) {
      const created = await call(served.url, token, 'POST', '/jobs', { component: 'ex-generic-v2', config });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      ids.push(String(created.body.id));
    }
    const ended = await Promise.all(ids.map((id) => untilFinished(served.url, token, id, 60_000)));
    assert.deepEqual(
      ended.map((j) => j.status),
      ['success', 'success', 'error'],
    );

    samples = await scrape(url);
    assert.equal(figure(samples, 'gex_jobs_finished_total', { component: 'ex-generic-v2', status: 'success' }), 2);
    assert.equal(figure(samples, 'gex_jobs_finished_total', { component: 'ex-generic-v2', status: 'error' }), 1);
    assert.equal(figure(samples, 'gex_job_duration_seconds_count', { status: 'success' }), 2);
    assert.equal(figure(samples, 'gex_job_duration_seconds_count', { status: 'error' }), 1);
    const longest = Math.max(...ended.map((j) => Number(j.durationSeconds)));
    const sum = figure(samples, 'gex_job_duration_seconds_sum', { status: 'success' })!;
    assert.ok(sum > 0 && sum < 2 * (longest + 1), `run time of the two successes: ${sum} s`);
    assert.equal(figure(samples, 'gex_job_duration_seconds_bucket', { status: 'error', le: '+Inf' }), 1);
    assert.equal(figure(samples, 'gex_workers_idle'), 1);
    assert.equal(figure(samples, 'gex_workers_busy'), 0);

    // the server's /metrics: its HTTP metrics and the job metrics in one exposition; the same queue, none of the worker's ends
    const server = await scrape(served.url);
    assert.ok((figure(server, 'gex_http_requests_total', { method: 'POST', route: '/jobs', status: '201' }) ?? 0) >= 3);
    assert.equal(figure(server, 'gex_jobs_waiting'), figure(samples, 'gex_jobs_waiting'));
    assert.equal(figure(server, 'gex_jobs_processing'), 0);
    assert.equal(figure(server, 'gex_workers_idle'), 0, '--workers 0');
    assert.deepEqual(
      server.filter((s) => s.name === 'gex_jobs_finished_total'),
      [],
      'the worker committed every end',
    );

    // a schedule firing every 2 s: fired by whichever ticker gets there first (the server's or the worker's), each tick counted once
    const added = await runGex(['schedules', 'add', a, '--cron', '*/2 * * * * *', '--store', store], TEST_KEY);
    assert.equal(added.code, 0, added.stderr);
    const scheduleId = /Schedule (\d+) added/.exec(added.stdout)?.[1];
    assert.ok(scheduleId, added.stdout);
    const firedBoth = async () =>
      (figure(await scrape(url), 'gex_schedules_fired_total') ?? 0) +
      (figure(await scrape(served.url), 'gex_schedules_fired_total') ?? 0);
    const deadline = Date.now() + 20_000;
    while ((await firedBoth()) < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal((await runGex(['schedules', 'remove', scheduleId, '--store', store], TEST_KEY)).code, 0);
    // the tickers see the removal within a second
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const listed = await call(served.url, token, 'GET', '/search/jobs?limit=500');
    const byTicks = (listed.body as unknown[]).length - ids.length;
    assert.ok(byTicks >= 2, `the schedule made jobs: ${byTicks}`);
    assert.equal(await firedBoth(), byTicks, 'one fired tick per job the schedule made, over both processes');

    assert.equal((await fetch(`${url}/other`)).status, 404);
    assert.equal((await fetch(`${url}/metrics`, { method: 'POST' })).status, 405);
  });

  it('a --metrics-listen port in use: exit 1, says which and what to do, runs no job', async () => {
    const taken = http.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const r = await runGex(['worker', '--store', fresh!.location, '--metrics-listen', `127.0.0.1:${port}`], TEST_KEY);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(
        r.stdout + r.stderr,
        new RegExp(
          `--metrics-listen 127\\.0\\.0\\.1:${port}: port ${port} on 127\\.0\\.0\\.1 is already in use: choose another port`,
        ),
      );
      assert.doesNotMatch(r.stdout + r.stderr, /Worker ready/);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });
});
