import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { repoRoot, runGex, startServe } from '../support/cli.js';
import { call, childrenOf, untilFinished, type Json } from '../support/queue.js';

const PHP_CLIENT = path.resolve(repoRoot, '..', 'shared', 'clients', 'job-queue-php');
const KEY = { GEX_MASTER_KEY: '66'.repeat(32) };

interface Served {
  child: import('node:child_process').ChildProcess;
  url: string;
  output: () => string;
}

/**
 * The Queue API on a real `gex serve` with its embedded worker pool: Keboola's PHP client, the
 * one-job-per-configuration rule measured at a local API, kill, timeout, a restart after kill -9,
 * project isolation and bad input. Every job is a real `gex run` process.
 */
describe('Queue API and the embedded worker pool (gex serve --workers)', function () {
  this.timeout(120_000);
  let dir: string;
  let store: string;
  let api: FixtureServer;
  /** per configuration tag: the [arrived, answered] times of its requests */
  const calls = new Map<string, Array<[number, number]>>();
  let token: string;
  let reader: string;
  let stranger: string;
  const configs: Record<string, string> = {};
  let served: Served;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-queue-'));
    store = path.join(dir, 'store.sqlite');
    api = await startFixtureServer({
      handler: async (r) => {
        const url = new URL(r.url, 'http://x');
        const tag = url.searchParams.get('tag') ?? '?';
        const arrived = Date.now();
        await sleep(tag.startsWith('slow') ? 8000 : 120);
        calls.set(tag, [...(calls.get(tag) ?? []), [arrived, Date.now()]]);
        return { body: { data: [{ id: 1, tag }] } };
      },
    });
    const made = async (args: string[]) => {
      const r = await runGex(['tokens', 'create', ...args, '--store', store], KEY);
      assert.equal(r.code, 0, r.stderr);
      return r.stdout.trim();
    };
    token = await made(['--description', 'ci']);
    reader = await made(['--description', 'viewer', '--read-only']);
    stranger = await made(['--description', 'other', '--project', 'other']);
    served = await startServe(['--store', store, '--workers', '2'], KEY);
    for (const tag of ['a', 'b', 'slow', 'slow2', 'off']) {
      const configuration = {
        parameters: {
          api: { baseUrl: `${api.url}/v1/` },
          config: { outputBucket: `q-${tag}`, jobs: [{ endpoint: 'users', dataField: 'data', params: { tag } }] },
        },
      };
      const created = await call(
        served.url,
        token,
        'POST',
        '/v2/storage/branch/default/components/ex-generic-v2/configs',
        {
          name: tag,
          configuration,
          ...(tag === 'off' ? { isDisabled: true } : {}),
        },
      );
      assert.equal(created.status, 201, JSON.stringify(created.body));
      configs[tag] = String(created.body.id);
    }
  });
  after(async () => {
    served?.child.kill('SIGTERM');
    await api?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists the queue in the API index and answers with the whole job object', async () => {
    const index = await call(served.url, token, 'GET', '/v2/storage');
    assert.deepEqual(index.body.services, [
      { id: 'queue', url: served.url },
      { id: 'scheduler', url: served.url },
      { id: 'notification', url: served.url },
    ]);
    const created = await call(
      served.url,
      token,
      'POST',
      '/jobs',
      {
        component: 'ex-generic-v2',
        config: configs.a,
        mode: 'run',
        configRowIds: [],
        tag: null,
        branchId: null,
        orchestrationJobId: null,
        parentRunId: null,
        configData: [],
      },
      { 'X-KBC-RunId': '1000.7' },
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const job = created.body;
    assert.equal(job.runId, `1000.7.${job.id}`);
    assert.equal(job.parentRunId, '1000.7');
    assert.ok(['created', 'processing'].includes(job.status));
    assert.deepEqual([job.configData, job.usageData, job.backend, job.metrics], [[], [], [], []]);
    assert.equal(job.url, `${served.url}/jobs/${job.id}`);
    const done = await untilFinished(served.url, token, job.id);
    assert.equal(done.status, 'success', JSON.stringify(done));
    assert.equal(done.result.message, 'Component processing finished.');
    assert.equal(done.result.output.tables[0].id, 'in.c-q-a.users');
    assert.match(done.endTime, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/);
    assert.equal(typeof done.durationSeconds, 'number');
    assert.equal(done.isFinished, true);
    const events = await call(served.url, token, 'GET', `/v2/storage/events?runId=1000.7`);
    assert.ok(events.body.length > 0, "the run's log lines are the job's events");
    assert.ok(events.body.every((e: Json) => typeof e.message === 'string' && e.runId === '1000.7'));
    assert.deepEqual(
      (await call(served.url, stranger, 'GET', `/v2/storage/events?runId=1000.7`)).body,
      [],
      'another project sees no events',
    );
  });

  it("runs a burst of one configuration's jobs one at a time, in order, beside another configuration", async () => {
    const before = (calls.get('a') ?? []).length;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push(
        (await call(served.url, token, 'POST', '/jobs', { component: 'ex-generic-v2', config: configs.a })).body
          .id as string,
      );
    const other = (await call(served.url, token, 'POST', '/jobs', { component: 'ex-generic-v2', config: configs.b }))
      .body.id as string;
    const statuses = (
      await call(
        served.url,
        token,
        'GET',
        `/search/jobs?config=${configs.a}&status[]=waiting&status[]=created&status[]=processing`,
      )
    ).body;
    assert.ok(
      statuses.some((j: Json) => j.status === 'waiting'),
      'the later ones wait, they are not refused',
    );
    const done = await Promise.all([...ids, other].map((id) => untilFinished(served.url, token, id, 90_000)));
    assert.deepEqual(
      done.map((j) => j.status),
      Array(5).fill('success'),
      JSON.stringify(done.map((j) => j.result)),
    );
    const spans = (calls.get('a') ?? []).slice(before).sort((x, y) => x[0] - y[0]);
    assert.equal(spans.length, 4);
    for (let i = 1; i < spans.length; i++)
      assert.ok(
        spans[i][0] >= spans[i - 1][1],
        `request ${i} of configuration a arrived before the previous one was answered`,
      );
    const started = done.slice(0, 4).map((j) => j.startTime as string);
    assert.deepEqual([...started].sort(), started, 'in the order they were created');
  });

  it('a configuration whose secret cannot be decrypted: the job ends as error naming the key, no request sent', async () => {
    const configuration = {
      parameters: {
        api: { baseUrl: `${api.url}/v1/`, http: { headers: { 'X-Key': { attr: '#token' } } } },
        '#token': 'KBC::ProjectSecure::bm90IGEgY2lwaGVydGV4dA==',
        config: {
          outputBucket: 'q-secret',
          jobs: [{ endpoint: 'users', dataField: 'data', params: { tag: 'secret' } }],
        },
      },
    };
    const created = await call(
      served.url,
      token,
      'POST',
      '/v2/storage/branch/default/components/ex-generic-v2/configs',
      {
        name: 'secret',
        configuration,
      },
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const job = (
      await call(served.url, token, 'POST', '/jobs', { component: 'ex-generic-v2', config: created.body.id })
    ).body;
    const ended = await untilFinished(served.url, token, job.id, 30_000);
    assert.equal(ended.status, 'error');
    assert.match(ended.result.message, /#token/);
    assert.equal(ended.result.error.type, 'user');
    assert.equal(calls.get('secret'), undefined, 'no request was sent');
  });

  it('kill: a waiting job is cancelled, a running one terminated', async () => {
    const first = (await call(served.url, token, 'POST', '/jobs', { component: 'ex-generic-v2', config: configs.slow }))
      .body;
    const second = (
      await call(served.url, token, 'POST', '/jobs', { component: 'ex-generic-v2', config: configs.slow })
    ).body;
    assert.equal((await call(served.url, reader, 'POST', `/jobs/${second.id}/kill`)).status, 403);
    const cancelled = await call(served.url, token, 'POST', `/jobs/${second.id}/kill`);
    assert.equal(cancelled.body.status, 'cancelled');
    for (
      let i = 0;
      i < 100 && (await call(served.url, token, 'GET', `/jobs/${first.id}`)).body.status !== 'processing';
      i++
    )
      await sleep(50);
    const killing = await call(served.url, token, 'POST', `/jobs/${first.id}/kill`);
    assert.equal(killing.body.desiredStatus, 'terminating');
    const killed = await untilFinished(served.url, token, first.id, 10_000);
    assert.equal(killed.status, 'terminated');
    const again = await call(served.url, token, 'POST', `/jobs/${first.id}/kill`);
    assert.equal(again.status, 400, 'a finished job cannot be killed');
  });

  it("refuses bad input with a 4xx in Keboola's shape and creates no job", async () => {
    const count = async () => (await call(served.url, token, 'GET', '/search/jobs?limit=500')).body.length;
    const jobsBefore = await count();
    const bad: Array<[string, number, unknown, string?]> = [
      ['unknown config', 404, { component: 'ex-generic-v2', config: '999999' }],
      ['unknown component', 404, { component: 'no.such', config: configs.a }],
      ['configData', 400, { component: 'ex-generic-v2', config: configs.a, configData: { parameters: {} } }],
      ['parallelism', 400, { component: 'ex-generic-v2', config: configs.a, parallelism: '5' }],
      ['configRowIds', 400, { component: 'ex-generic-v2', config: configs.a, configRowIds: ['nope'] }],
      ['mode', 400, { component: 'ex-generic-v2', config: configs.a, mode: 'debug' }],
      ['2 MB body', 413, `{"component":"ex-generic-v2","config":"${configs.a}","tag":"${'x'.repeat(2_000_000)}"}`],
      ['read-only token', 403, { component: 'ex-generic-v2', config: configs.a }, reader],
      ['another project', 404, { component: 'ex-generic-v2', config: configs.a }, stranger],
    ];
    for (const [what, status, body, who] of bad) {
      const res = await call(served.url, who ?? token, 'POST', '/jobs', body);
      assert.equal(res.status, status, `${what}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.status, 'error', what);
      assert.equal(typeof res.body.error, 'string', what);
      assert.match(res.body.exceptionId, /^exception-/, what);
    }
    const named = await call(served.url, token, 'POST', '/jobs', {
      component: 'ex-generic-v2',
      config: configs.a,
      configData: { a: 1 },
    });
    assert.match(named.body.error, /configData/);
    for (const query of ['createdTimeFrom=yesterday-ish', 'limit=-1', 'sortBy=nope', 'status=bogus']) {
      assert.equal((await call(served.url, token, 'GET', `/search/jobs?${query}`)).status, 400, query);
    }
    assert.equal(await count(), jobsBefore);
  });

  it("answers in the Queue API's error shape, and a missing token with its own message, not the Storage API's", async () => {
    const queueError = (res: { status: number; body: Json }, status: number, message: RegExp, errorCode?: string) => {
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.deepEqual(Object.keys(res.body), ['error', 'code', 'exceptionId', 'status', 'context', 'gexCode']);
      assert.equal(res.body.code, status, "the status as a number (Keboola's Go SDK decodes an int)");
      assert.equal(res.body.status, 'error');
      assert.match(res.body.error, message);
      if (errorCode) assert.equal(res.body.context.errorCode, errorCode);
    };
    for (const [method, url] of [
      ['GET', '/search/jobs'],
      ['GET', '/jobs/1'],
      ['POST', '/jobs'],
      ['POST', '/jobs/1/kill'],
    ]) {
      const missing = await fetch(`${served.url}${url}`, { method });
      queueError({ status: missing.status, body: (await missing.json()) as Json }, 401, /^Invalid access token$/);
      queueError(await call(served.url, 'wrong', method, url), 401, /^Invalid access token$/);
    }
    queueError(await call(served.url, token, 'GET', '/jobs/999999999'), 404, /not found/, 'queue.jobNotFound');
    queueError(
      await call(served.url, token, 'GET', '/jobs/1/nonsense'),
      404,
      /^Unknown route: GET \/jobs\/1\/nonsense\./,
      'notFound',
    );
    queueError(
      await call(served.url, token, 'POST', '/jobs', { component: 'ex-generic-v2', config: configs.a, mode: 'debug' }),
      400,
      /mode/,
      'queue.validation',
    );
    // the Storage API keeps its own wording and shape
    const storage = await fetch(`${served.url}/v2/storage/tokens/verify`);
    assert.deepEqual((({ error, code }) => ({ error, code }))((await storage.json()) as Json), {
      error: 'Access token must be set',
      code: '',
    });
  });

  it('searches with every list encoding, paging and relative times; other projects see nothing', async () => {
    const all = (await call(served.url, token, 'GET', '/search/jobs')).body as Json[];
    const ids = (q: string) =>
      call(served.url, token, 'GET', `/search/jobs?${q}`).then((r) => (r.body as Json[]).map((j) => j.id));
    const ofA = all.filter((j) => j.config === configs.a).map((j) => j.id);
    assert.ok(ofA.length >= 5);
    for (const q of [
      `config=${configs.a}`,
      `configId=${configs.a}`,
      `config[]=${configs.a}`,
      `config[0]=${configs.a}`,
      `configId=${configs.a}&configId=nope`,
    ]) {
      assert.deepEqual(await ids(`${q}&component=ex-generic-v2`), ofA, q);
    }
    assert.deepEqual(
      await ids(`componentId[0]=ex-generic-v2&config=${configs.a}&limit=2&offset=1&sortOrder=desc`),
      ofA.slice(1, 3),
    );
    assert.deepEqual(await ids(`config=${configs.a}&sortBy=id&sortOrder=asc`), [...ofA].reverse());
    assert.deepEqual(
      await ids('createdTimeFrom=-1 hours&status=cancelled'),
      all.filter((j) => j.status === 'cancelled').map((j) => j.id),
    );
    assert.deepEqual(await ids('createdTimeTo=-1 hours'), []);
    assert.deepEqual(
      await ids('status=success&status=terminated&type=standard'),
      all.filter((j) => ['success', 'terminated'].includes(j.status)).map((j) => j.id),
    );
    assert.deepEqual((await call(served.url, stranger, 'GET', '/search/jobs')).body, []);
    assert.equal((await call(served.url, stranger, 'GET', `/jobs/${all[0].id}`)).status, 404);
    assert.equal((await call(served.url, stranger, 'POST', `/jobs/${all[0].id}/kill`)).status, 404);
  });

  it("Keboola's PHP client creates, reads, searches, kills and waits on jobs", async function () {
    if (!existsSync(path.join(PHP_CLIENT, 'autoload.php'))) {
      console.warn(`\n  !!! SKIPPED: Keboola's PHP Queue client is not at ${PHP_CLIENT}\n`);
      this.skip();
    }
    const script = path.join(dir, 'client.php');
    await writeFile(
      script,
      `<?php
require ${JSON.stringify(path.join(PHP_CLIENT, 'autoload.php'))};
use Keboola\\JobQueueClient\\{Client, JobData, ListJobsOptions, JobStatuses};
use Keboola\\JobQueueClient\\Exception\\ResponseException;
[, $url, $token, $config, $slow] = $argv;
$client = new Client($url . '/', $token);
$out = [];
$job = $client->createJob(new JobData('ex-generic-v2', $config, [], 'run', [], null, null, null, '555'));
$out['created'] = [$job->id, $job->status, $job->runId, $job->parentRunId];
$out['got'] = $client->getJob($job->id)->component;
$done = $client->waitForJobCompletion($job->id);
$out['done'] = [$done->status, $done->isFinished, $done->isSuccess(), $done->result['message']];
$listed = $client->listJobs((new ListJobsOptions())->setComponents(['ex-generic-v2'])->setConfigIds([$config])->setStatuses([JobStatuses::SUCCESS])->setLimit(3));
$out['listed'] = array_map(fn ($j) => $j->config, $listed);
$running = $client->createJob(new JobData('ex-generic-v2', $slow));
$queued = $client->createJob(new JobData('ex-generic-v2', $slow));
$out['killed'] = $client->terminateJob($queued->id)->status;
$out['terminating'] = $client->terminateJob($running->id)->desiredStatus;
$out['ended'] = $client->waitForJobCompletion($running->id)->status;
try { $client->createJob(new JobData('ex-generic-v2', 'no-such-config')); $out['invalid'] = 'created'; }
catch (ResponseException $e) { $out['invalid'] = $e->getCode(); $out['invalidCode'] = [$e->getErrorCode(), $e->getResponseData()['code']]; }
try { (new Client($url . '/', 'not-a-token'))->getJob($job->id); $out['badToken'] = 'read'; }
catch (ResponseException $e) { $out['badToken'] = [$e->getCode(), str_contains($e->getMessage(), 'Invalid access token'), $e->getResponseData()['error']]; }
echo json_encode($out);
`,
    );
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
      execFile('php', [script, served.url, token, configs.b, configs.slow], { timeout: 60_000 }, (error, out, err) =>
        error ? reject(new Error(`${error.message}\n${err}\n${out}`)) : resolve({ stdout: out, stderr: err }),
      ),
    );
    const out = JSON.parse(stdout) as Json;
    assert.equal(out.created[2], `555.${out.created[0]}`, stderr);
    assert.equal(out.created[3], '555');
    assert.equal(out.got, 'ex-generic-v2');
    assert.deepEqual(out.done, ['success', true, true, 'Component processing finished.']);
    assert.ok(out.listed.length >= 1 && out.listed.every((c: string) => c === configs.b));
    assert.equal(out.killed, 'cancelled');
    assert.equal(out.terminating, 'terminating');
    assert.equal(out.ended, 'terminated');
    assert.equal(out.invalid, 404);
    // the Queue API's error body: the status in `code`, its own code where the client's getErrorCode() reads it
    assert.deepEqual(out.invalidCode, ['queue.validation', 404]);
    assert.deepEqual(out.badToken, [401, true, 'Invalid access token']);
  });

  it('a restart after kill -9 ends the job that was running as error, stops its process, and runs the queued one', async () => {
    served.child.kill('SIGTERM');
    await new Promise((resolve) => served.child.once('exit', resolve));
    const first = await startServe(['--store', store, '--workers', '1'], KEY);
    try {
      const running = (
        await call(first.url, token, 'POST', '/jobs', { component: 'ex-generic-v2', config: configs.slow })
      ).body;
      const queued = (
        await call(first.url, token, 'POST', '/jobs', { component: 'ex-generic-v2', config: configs.slow })
      ).body;
      for (
        let i = 0;
        i < 100 && (await call(first.url, token, 'GET', `/jobs/${running.id}`)).body.status !== 'processing';
        i++
      )
        await sleep(50);
      // 'processing' is stored as the worker starts the process: under load it may show a moment later
      for (let i = 0; i < 100 && (await childrenOf(first.child.pid!)).length === 0; i++) await sleep(50);
      assert.equal((await childrenOf(first.child.pid!)).length, 1, 'one gex run runs the job');
      first.child.kill('SIGKILL');
      await new Promise((resolve) => first.child.once('exit', resolve));
      for (let i = 0; i < 40 && (await childrenOf(first.child.pid!)).length > 0; i++) await sleep(100);
      assert.deepEqual(await childrenOf(first.child.pid!), [], "the job's process did not outlive its server");
      served = await startServe(['--store', store, '--workers', '0'], KEY);
      const lost = (await call(served.url, token, 'GET', `/jobs/${running.id}`)).body;
      assert.equal(lost.status, 'error');
      assert.match(lost.result.message, /worker stopped/);
      const next = (await call(served.url, token, 'GET', `/jobs/${queued.id}`)).body;
      assert.ok(['created', 'waiting'].includes(next.status), 'the queued job is kept, to run on');
      await call(served.url, token, 'POST', `/jobs/${queued.id}/kill`);
    } finally {
      first.child.kill('SIGKILL');
    }
  });

  it('--job-timeout stops a job that runs too long and ends it as error', async () => {
    served.child.kill('SIGTERM');
    await new Promise((resolve) => served.child.once('exit', resolve));
    served = await startServe(['--store', store, '--workers', '1', '--job-timeout', '2'], KEY);
    const slow = (await call(served.url, token, 'POST', '/jobs', { component: 'ex-generic-v2', config: configs.slow2 }))
      .body;
    const timedOut = await untilFinished(served.url, token, slow.id, 15_000);
    assert.equal(timedOut.status, 'error');
    assert.match(timedOut.result.message, /timed out after 2 seconds/);
    // the message says the timeout ended it; it ran that long at least
    assert.ok(timedOut.durationSeconds >= 2, String(timedOut.durationSeconds));
  });
});
