import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { JobRepository } from '../../src/jobs/job-repository.js';
import { gexBin, runGex, startServe } from '../support/cli.js';
import { openEmbeddedStore } from '../support/open-store.js';

const KEY = { GEX_MASTER_KEY: '77'.repeat(32) };
type Json = Record<string, any>;

/**
 * `gex jobs` against a real `gex serve --workers` over HTTP, with only its address and a token
 * (no store file, no master key): every action, the exit codes of `run --wait`, `--json`, errors;
 * and the same output as the embedded mode on the server's own store.
 */
describe('gex jobs against a server (Queue API over HTTP)', function () {
  this.timeout(120_000);
  let dir: string;
  let store: string;
  let api: FixtureServer;
  let served: { child: import('node:child_process').ChildProcess; url: string };
  let token: string;
  const configs: Record<string, string> = {};
  /** the CLI as a remote user runs it: the server's address and a token, nothing else */
  let remote: (args: string[], env?: NodeJS.ProcessEnv) => ReturnType<typeof runGex>;
  const embedded = (args: string[]) => runGex([...args, '--store', store], KEY);

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-jobs-cli-'));
    store = path.join(dir, 'store.sqlite');
    api = await startFixtureServer({
      handler: async (r) => {
        const tag = new URL(r.url, 'http://x').searchParams.get('tag') ?? '?';
        if (tag === 'fail') return { status: 404, body: { error: 'no such users' } };
        await sleep(tag === 'slow' ? 5000 : 50);
        return { body: { data: [{ id: 1, tag }] } };
      },
    });
    const made = await runGex(['tokens', 'create', '--description', 'cli', '--store', store], KEY);
    assert.equal(made.code, 0, made.stderr);
    token = made.stdout.trim();
    served = await startServe(['--store', store, '--workers', '2'], KEY);
    remote = (args, env = {}) =>
      runGex(
        ['jobs', ...args],
        { GEX_STORE: '', GEX_MASTER_KEY: '', KBC_URL: served.url, KBC_TOKEN: token, ...env },
        { cwd: dir },
      );
    for (const tag of ['ok', 'fail', 'slow']) {
      const res = await fetch(`${served.url}/v2/storage/branch/default/components/ex-generic-v2/configs`, {
        method: 'POST',
        headers: { 'X-StorageApi-Token': token, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          name: tag,
          configuration: {
            parameters: {
              api: { baseUrl: `${api.url}/v1/` },
              config: { outputBucket: `j-${tag}`, jobs: [{ endpoint: 'users', dataField: 'data', params: { tag } }] },
            },
          },
        }),
      });
      assert.equal(res.status, 201);
      configs[tag] = String(((await res.json()) as Json).id);
    }
  });
  after(async () => {
    served?.child.kill('SIGTERM');
    await api?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const jobStatus = async (id: string) => {
    const res = await fetch(`${served.url}/jobs/${id}`, { headers: { 'X-StorageApi-Token': token } });
    return ((await res.json()) as Json).status as string;
  };
  let okJob: string;
  let failJob: string;

  it('run --wait: exit 0 for a job that succeeds, the status changes on stderr', async () => {
    const r = await remote(['run', configs.ok, '--wait']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    okJob = lines[0].split('\t')[0];
    assert.match(lines[0], new RegExp(`^${okJob}\\t(created|waiting)\\tex-generic-v2 ${configs.ok}\\t`));
    assert.match(lines[1], new RegExp(`^${okJob}\\tsuccess\\tex-generic-v2 ${configs.ok}\\t.*\\+00:00 \\d+s$`));
    assert.equal(lines[2], '  Component processing finished.');
    assert.match(r.stderr, new RegExp(`^Job ${okJob}: success$`, 'm'));
  });

  it('run --wait --json: exit 1 for a job that fails with a user error, the job objects on stdout', async () => {
    const r = await remote(['run', configs.fail, '--wait', '--json', '--store', served.url], { KBC_URL: '' });
    assert.equal(r.code, 1, r.stderr);
    const [created, ended] = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    failJob = created.id as string;
    assert.equal(ended.id, failJob);
    assert.equal(ended.status, 'error');
    assert.equal(ended.result.error.type, 'user');
    assert.equal(ended.url, `${served.url}/jobs/${failJob}`);
  });

  it('list filters by status and configuration; --json is the Queue API list', async () => {
    const r = await remote(['list', '--status', 'success', '--config', configs.ok]);
    assert.equal(r.code, 0, r.stderr);
    const ids = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    assert.ok(ids.some(([id]) => id === okJob));
    assert.ok(ids.every(([, status, what]) => status === 'success' && what === `ex-generic-v2 ${configs.ok}`));
    const json = await remote(['list', '--status', 'error,success', '--json', '--limit', '1']);
    const listed = JSON.parse(json.stdout) as Json[];
    assert.deepEqual(
      listed.map((j) => j.id),
      [failJob],
    );
    const bad = await remote(['list', '--status', 'bogus']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /Unknown status "bogus"/);
  });

  it('show and log print as the embedded mode does on the same store', async () => {
    for (const args of [['show', okJob], ['show', failJob, '--json'], ['log', okJob], ['list']]) {
      const over = await remote(args);
      const local = await embedded(['jobs', ...args]);
      assert.equal(over.code, 0, over.stderr);
      assert.equal(local.code, 0, local.stderr);
      // the embedded mode has no server address for the job's url
      assert.equal(over.stdout.replaceAll(served.url, ''), local.stdout, args.join(' '));
    }
    const log = (await remote(['log', okJob])).stdout.trim().split('\n');
    assert.ok(log.length > 2);
    assert.ok(log.every((l) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00 (INFO|WARNING|ERROR) /.test(l)));
  });

  it('KBC_RUNID is the parent run in both modes; the embedded mode waits for the server to run the job', async () => {
    const over = await remote(['run', configs.ok, '--json'], { KBC_RUNID: '4242' });
    assert.equal(over.code, 0, over.stderr);
    const queued = JSON.parse(over.stdout) as Json;
    assert.equal(queued.runId, `4242.${queued.id}`);
    const local = await runGex(['jobs', 'run', configs.ok, '--wait', '--json', '--store', store], {
      ...KEY,
      KBC_RUNID: '4243',
    });
    assert.equal(local.code, 0, local.stderr);
    const ended = JSON.parse(local.stdout.trim().split('\n')[1]) as Json;
    assert.equal(ended.runId, `4243.${ended.id}`);
    assert.equal(ended.status, 'success');
  });

  it('a server whose index lists no queue, or one gex does not send the token to: a clear refusal', async () => {
    for (const services of [[], [{ id: 'queue', url: 'file:///etc/passwd' }], [{ id: 'queue', url: 'ftp://x' }]]) {
      const index = await startFixtureServer({ handler: () => ({ body: { api: 'storage', services } }) });
      try {
        const r = await remote(['list'], { KBC_URL: index.url });
        assert.equal(r.code, 1, JSON.stringify(services));
        assert.match(
          r.stderr,
          services.length ? /names as its Job Queue .*not an http\(s\) address/ : /lists no Job Queue/,
        );
        assert.deepEqual(
          index.requests.map((q) => q.url),
          ['/v2/storage?exclude=components'],
          'nothing but the index was asked',
        );
      } finally {
        await index.close();
      }
    }
  });

  it("a Keboola-like stack: the queue at the index's address, GETs retried, a POST sent once, size limits, Keboola's events", async () => {
    let base = '';
    let gets = 0;
    const job = {
      id: '7',
      runId: '7',
      status: 'success',
      component: 'keboola.ex-x',
      config: 'c1',
      configRowIds: [],
      createdTime: '2026-01-01T00:00:00+01:00',
      durationSeconds: 3,
      isFinished: true,
      result: { message: 'done' },
    };
    const stack = await startFixtureServer({
      handler: (r) => {
        const url = new URL(r.url, 'http://x');
        if (url.pathname === '/v2/storage') return { body: { services: [{ id: 'queue', url: `${base}/queue/` }] } };
        if (r.method === 'GET' && url.pathname === '/queue/jobs/7')
          return ++gets < 3 ? { status: 503, body: { error: 'busy', code: 503 } } : { body: job };
        if (r.method === 'POST' && url.pathname === '/queue/jobs')
          return { status: 503, body: { error: 'Service unavailable', code: 503, status: 'error' } };
        if (url.pathname === '/queue/search/jobs') return { body: `[${' '.repeat(17 * 1024 * 1024)}]` };
        if (url.pathname === '/v2/storage/events' && url.searchParams.get('runId') === '7')
          return { body: [{ id: '123', type: 'warn', message: 'careful', created: '2026-01-01T00:00:01+01:00' }] };
        return undefined;
      },
    });
    base = stack.url;
    try {
      const env = { KBC_URL: stack.url };
      const shown = await remote(['show', '7'], env);
      assert.equal(shown.code, 0, shown.stderr);
      assert.equal(shown.stdout, '7\tsuccess\tkeboola.ex-x c1\t2026-01-01T00:00:00+01:00 3s\n  done\n');
      assert.equal(gets, 3, 'a GET answered 503 is retried');
      const run = await remote(['run', 'c1', '--component-id', 'keboola.ex-x'], env);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /Job Queue API POST jobs failed: \[503\] Service unavailable/);
      assert.equal(stack.requests.filter((q) => q.method === 'POST').length, 1, 'a POST is sent once');
      const listed = await remote(['list'], env);
      assert.equal(listed.code, 1);
      assert.match(listed.stderr, /answered GET search\/jobs with more than 16777216 bytes/);
      const log = await remote(['log', '7'], env);
      assert.equal(log.stdout, '2026-01-01T00:00:01+01:00 WARNING careful\n', log.stderr);
      assert.ok(stack.requests.every((q) => q.headers['x-storageapi-token'] === token));
    } finally {
      await stack.close();
    }
  });

  it('run --wait of a job that ends warning (any job, not only a flow): exit 0, and stderr says so with its message', async () => {
    let base = '';
    let gets = 0;
    const job = (status: string, more: Json = {}) => ({
      id: '7',
      runId: '7',
      status,
      component: 'keboola.ex-x',
      config: 'c1',
      configRowIds: [],
      createdTime: '2026-01-01T00:00:00+01:00',
      durationSeconds: null,
      isFinished: status === 'warning',
      type: 'standard',
      ...more,
    });
    const stack = await startFixtureServer({
      handler: (r) => {
        const url = new URL(r.url, 'http://x');
        if (url.pathname === '/v2/storage') return { body: { services: [{ id: 'queue', url: `${base}/queue/` }] } };
        if (r.method === 'POST' && url.pathname === '/queue/jobs') return { status: 201, body: job('created') };
        if (url.pathname === '/queue/jobs/7')
          return {
            body: ++gets < 2 ? job('processing') : job('warning', { result: { message: 'rows skipped\u001b[2J' } }),
          };
        return undefined;
      },
    });
    base = stack.url;
    try {
      const r = await remote(['run', 'c1', '--component', 'keboola.ex-x', '--wait'], { KBC_URL: stack.url });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /^Job 7 ended with a warning: "rows skipped\\u001b\[2J"$/m);
      assert.ok(!r.stderr.includes('\u001b'), 'the message escaped');
      assert.deepEqual(
        stack.requests.filter((q) => q.url.includes('search')),
        [],
        'no tree is read for a job that is no flow',
      );
      assert.match(JSON.parse(stack.requests.find((q) => q.method === 'POST')!.body).component, /^keboola\.ex-x$/);
    } finally {
      await stack.close();
    }
  });

  it('an unknown job id, a wrong token and no token: one clear line, exit 1, no token in the output', async () => {
    for (const args of [
      ['show', '999999'],
      ['log', '999999'],
      ['kill', '999999'],
    ]) {
      const r = await remote(args);
      assert.equal(r.code, 1, args.join(' '));
      assert.match(r.stderr, /^Job "999999" not found\n$/, args.join(' '));
    }
    const wrong = 'wrong-token-0123456789';
    const r = await remote(['list'], { KBC_TOKEN: wrong });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Invalid access token/);
    assert.ok(!`${r.stdout}${r.stderr}`.includes(wrong));
    const none = await remote(['show', okJob], { KBC_TOKEN: '' });
    assert.equal(none.code, 1);
    assert.match(
      none.stderr,
      /The Storage API at .* needs a token: none was given\. Pass a valid token with --token \(or set KBC_TOKEN\)/,
    );
    const notJob = await remote(['show', '../v2']);
    assert.equal(notJob.code, 1);
    assert.match(notJob.stderr, /Not a job id/);
  });

  it('log --follow prints the lines of a running job until it ends; kill stops one; run --wait of a killed job exits 143', async () => {
    const started = await remote(['run', configs.slow, '--json']);
    assert.equal(started.code, 0, started.stderr);
    const slow = (JSON.parse(started.stdout) as Json).id as string;
    // the first lines arrive while the job still runs
    const child = spawn(process.execPath, [gexBin, 'jobs', 'log', slow, '--follow'], {
      env: { ...process.env, GEX_STORE: '', KBC_URL: served.url, KBC_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const followed = { stdout: '', stderr: '', code: -1 };
    let statusAtFirstLine: Promise<string> | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      statusAtFirstLine ??= jobStatus(slow);
      followed.stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => (followed.stderr += chunk.toString()));
    followed.code = await new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
    assert.equal(followed.code, 0, followed.stderr);
    assert.equal(await statusAtFirstLine, 'processing', 'lines are printed while the job runs');
    assert.equal(JSON.parse((await remote(['show', slow, '--json'])).stdout).status, 'success');
    assert.equal(followed.stdout, (await remote(['log', slow])).stdout, 'every line, once, in order');
    assert.ok(followed.stdout.split('\n').length > 2);

    const waiting = remote(['run', configs.slow, '--wait']);
    let id = '';
    for (let i = 0; i < 200 && !id; i++) {
      const running = JSON.parse((await remote(['list', '--status', 'processing', '--json'])).stdout) as Json[];
      id = running.find((j) => j.config === configs.slow)?.id ?? '';
      if (!id) await sleep(100);
    }
    assert.ok(id, 'the job started');
    const killed = await remote(['kill', id]);
    assert.equal(killed.code, 0, killed.stderr);
    assert.match(killed.stdout, new RegExp(`^${id}\\tterminating\\t`));
    const waited = await waiting;
    assert.equal(waited.code, 143, waited.stderr);
    assert.match(waited.stderr, new RegExp(`^Job ${id}: processing$[\\s\\S]*^Job ${id}: terminated$`, 'm'));
  });

  it('events: newest first, limited and paged in SQL (sinceId, maxId); the CLI reads a long log in order', async () => {
    const backend = await openEmbeddedStore(store, { ...process.env, ...KEY });
    let projectId: number;
    try {
      const jobs = new JobRepository(backend.db);
      const job = (await jobs.get(null, Number(okJob)))!;
      projectId = job.projectId;
      const lines = Array.from({ length: 2500 }, (_, i) => ({
        created: new Date().toISOString(),
        level: 'info' as const,
        message: `extra ${i}`,
      }));
      await jobs.appendEvents(job, lines);
    } finally {
      await backend.close();
    }
    assert.ok(projectId > 0);
    const events = async (query: string) => {
      const res = await fetch(`${served.url}/v2/storage/events?runId=${okJob}&${query}`, {
        headers: { 'X-StorageApi-Token': token },
      });
      assert.equal(res.status, 200, query);
      return (await res.json()) as Json[];
    };
    const newest = await events('limit=1000');
    assert.equal(newest.length, 1000);
    assert.equal(newest[0].message, 'extra 2499');
    assert.equal(newest[999].message, 'extra 1500');
    const ids = newest.map((e) => Number(e.id));
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => b - a),
    );
    const older = await events(`limit=2&maxId=${ids[999] - 1}`);
    assert.deepEqual(
      older.map((e) => e.message),
      ['extra 1499', 'extra 1498'],
    );
    const since = await events(`limit=1000&sinceId=${ids[2]}`);
    assert.deepEqual(
      since.map((e) => e.message),
      ['extra 2499', 'extra 2498'],
    );
    const bad = await fetch(`${served.url}/v2/storage/events?runId=${okJob}&sinceId=x`, {
      headers: { 'X-StorageApi-Token': token },
    });
    assert.equal(bad.status, 400);
    const log = (await remote(['log', okJob])).stdout.trim().split('\n');
    const extra = log.filter((l) => / extra \d+$/.test(l)).map((l) => Number(/extra (\d+)$/.exec(l)![1]));
    assert.deepEqual(
      extra,
      Array.from({ length: 2500 }, (_, i) => i),
      'every line once, oldest first, across pages',
    );
  });
});
