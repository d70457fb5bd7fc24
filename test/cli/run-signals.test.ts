import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fromPlain } from '../../src/json/index.js';
import { startFixtureServer } from '../support/fixture-server/fixture-server.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { gexBin, repoRoot } from '../support/cli.js';
import { HoldingApi, pagedParameters, rowStates, startGex, storePagedConfiguration } from '../support/gex-process.js';

const KEY = { GEX_MASTER_KEY: '55'.repeat(32) };

/** Every file under `dir`, relative, or [] when it does not exist. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe('gex run: stop signals (real processes and signals)', function () {
  this.timeout(30_000);
  let api: HoldingApi;
  let dir: string;
  let store: string;
  let tmp: string;
  let configId: string;

  beforeEach(async () => {
    api = await HoldingApi.start(3);
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-signals-'));
    store = path.join(dir, 'store.sqlite');
    tmp = path.join(dir, 'tmp');
    await mkdir(tmp);
    configId = await storePagedConfiguration(store, KEY, api);
  });
  afterEach(async () => {
    await api.close();
    await rm(dir, { recursive: true, force: true });
  });

  // the record queue (spool) lives in TMPDIR: a folder of the test's own shows what is left behind
  const env = () => ({ ...KEY, TMPDIR: tmp, GEX_STORE: store, KBC_DATADIR: path.join(dir, 'data') });

  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const) {
    it(`${signal} during a request stops a --config-id run: exit ${code}, summary "cancelled", no state saved, no table, no staging/spool/lock left`, async () => {
      const before = await rowStates(store, KEY, configId);
      const run = startGex(['run', '--config-id', configId, '--summary', path.join(dir, 'summary.json')], env());
      // pages 1 and 2 are parsed into the spool; page 3 is in flight and the API never answers it
      await api.requested(3);
      assert.ok(
        filesUnder(tmp).some((f) => f.startsWith('gex-spool-')),
        'the run has a spool while it runs',
      );
      run.child.kill(signal);
      // the API holds the in-flight request for ever: the run ends only because it aborted it
      const exit = await run.exited;
      assert.equal(exit.code, code, run.output());
      assert.match(run.output(), new RegExp(`cancelled by ${signal}: no state saved`));
      const summary = JSON.parse(await readFile(path.join(dir, 'summary.json'), 'utf8'));
      assert.equal(summary.status, 'cancelled');
      assert.equal(summary.stateSaved, false);
      assert.equal(summary.error, undefined);
      assert.deepEqual(
        summary.rows.map((r: { id: string; status: string }) => [r.id, r.status]),
        [['users', 'cancelled']],
      );
      assert.deepEqual(await rowStates(store, KEY, configId), before);
      const data = path.join(dir, 'data');
      assert.deepEqual(
        filesUnder(path.join(data, 'rows', 'users', 'out')),
        [],
        'no table, manifest, staging file or state',
      );
      assert.deepEqual(filesUnder(tmp), [], 'no spool left');
      assert.equal(existsSync(path.join(data, '.gex-run.lock')), false, 'data folder lock released');
      assert.deepEqual(filesUnder(`${store}.run-locks`), [], 'configuration lock released');
    });
  }

  it('SIGTERM stops a data-folder run (gex run --data-dir): exit 143, no table, no out/state.json', async () => {
    const data = path.join(dir, 'plain');
    await mkdir(data);
    await writeFile(path.join(data, 'config.json'), JSON.stringify({ parameters: pagedParameters(api) }));
    const run = startGex(['run', '--data-dir', data, '--summary', path.join(dir, 's.json')], { TMPDIR: tmp });
    await api.requested(3);
    run.child.kill('SIGTERM');
    assert.equal((await run.exited).code, 143, run.output());
    assert.equal(JSON.parse(await readFile(path.join(dir, 's.json'), 'utf8')).status, 'cancelled');
    assert.deepEqual(filesUnder(path.join(data, 'out')), []);
    assert.deepEqual(filesUnder(tmp), []);
    assert.deepEqual(filesUnder(data), ['config.json']);
  });

  it('SIGTERM with 8 child requests in flight (child concurrency 8): every one aborted, exit 143, nothing written', async () => {
    let arrived = 0;
    let notify: () => void = () => undefined;
    const eight = new Promise<void>((resolve) => (notify = () => arrived >= 8 && resolve()));
    let release: () => void = () => undefined;
    const never = new Promise<void>((resolve) => (release = resolve));
    const held = await startFixtureServer({
      handler: async (request) => {
        const url = new URL(request.url, 'http://x');
        if (url.pathname === '/api/parents')
          return {
            body: {
              items:
                Number(url.searchParams.get('page') ?? 1) === 1
                  ? Array.from({ length: 20 }, (_, i) => ({ id: i + 1 }))
                  : [],
            },
          };
        arrived++;
        notify();
        await never;
        return { body: { id: 1 } };
      },
    });
    try {
      const data = path.join(dir, 'children');
      await mkdir(data);
      const child = {
        endpoint: 'parents/{id}',
        dataType: 'detail',
        dataField: '.',
        placeholders: { id: 'id' },
        concurrency: 8,
      };
      const parameters = {
        api: { baseUrl: `${held.url}/api/`, pagination: { method: 'pagenum' } },
        config: { outputBucket: 'b', jobs: [{ endpoint: 'parents', dataField: 'items', children: [child] }] },
      };
      await writeFile(path.join(data, 'config.json'), JSON.stringify({ parameters }));
      const run = startGex(['run', '--data-dir', data], { TMPDIR: tmp });
      await eight;
      const sent = Date.now();
      run.child.kill('SIGTERM');
      assert.equal((await run.exited).code, 143, run.output());
      assert.ok(Date.now() - sent < 5000, 'the held requests were aborted, not waited for');
      assert.equal(arrived, 8, 'no more than the concurrency were in flight');
      assert.deepEqual(filesUnder(path.join(data, 'out')), []);
      assert.deepEqual(filesUnder(tmp), []);
    } finally {
      release();
      await held.close();
    }
  });

  it('a run let finish after the same setup saves state and tables (the stop tests above prove something)', async () => {
    const run = startGex(['run', '--config-id', configId], env());
    await api.requested(3);
    api.release();
    assert.equal((await run.exited).code, 0, run.output());
    assert.deepEqual(filesUnder(path.join(dir, 'data', 'rows', 'users', 'out', 'tables')).sort(), [
      'b.users',
      'b.users.manifest',
    ]);
    const state = (await rowStates(store, KEY, configId)).users as { component: { time: { previousStart: number } } };
    assert.equal(typeof state.component.time.previousStart, 'number');
  });

  it('as PID 1 (unshare --pid --fork, no init) SIGTERM still stops the run with 143', async function () {
    const run = startGex(['run', '--config-id', configId, '--summary', path.join(dir, 'pid1.json')], env(), {
      command: ['unshare', '--pid', '--fork', process.execPath, gexBin],
    });
    await api.requested(3);
    const unsharePid = run.child.pid!;
    const gexPid = Number(readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim());
    // gex is PID 1 of its namespace: the kernel applies no default action to its signals
    assert.match(readFileSync(`/proc/${gexPid}/status`, 'utf8'), /^NSpid:\s+\d+\s+1$/m);
    process.kill(gexPid, 'SIGTERM');
    const exit = await run.exited;
    assert.equal(exit.code, 143, run.output());
    assert.equal(JSON.parse(await readFile(path.join(dir, 'pid1.json'), 'utf8')).status, 'cancelled');
  });
});

describe('stop signals: a second signal during the cleanup exits at once', () => {
  it("exits 143 on the second SIGTERM while the first one's cleanup still runs", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-second-signal-'));
    try {
      // a command whose cleanup takes a minute
      const script = path.join(dir, 'slow-cleanup.mjs');
      await writeFile(
        script,
        `import { cancelOnStop } from ${JSON.stringify(path.join(repoRoot, 'dist', 'src', 'cli', 'process', 'stop-signals.js'))};
         const signal = cancelOnStop();
         signal.addEventListener('abort', () => { console.log('cleaning up'); setTimeout(() => process.exit(0), 60000); });
         setInterval(() => {}, 1000);
         console.log('ready');`,
      );
      const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      const seen = (text: string) =>
        new Promise<void>((resolve) => child.stdout.on('data', (d) => ((out += d), out.includes(text) && resolve())));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      await seen('ready');
      child.kill('SIGTERM');
      await seen('cleaning up');
      const sent = Date.now();
      child.kill('SIGTERM');
      assert.equal(await exited, 143);
      assert.ok(Date.now() - sent < 5000);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a closed stdout (| head -1) never crashes a command', function () {
  this.timeout(60_000);
  let dir: string;
  let store: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-epipe-'));
    store = path.join(dir, 'store.sqlite');
    const backend = await openEmbeddedStore(store, KEY);
    const session = await backend.localSession();
    // far more output than a pipe buffers (64 KiB), so writes go on after head has gone
    for (let i = 0; i < 200; i++)
      await session.createConfiguration('ex-generic-v2', {
        name: `config ${i} ${'x'.repeat(500)}`,
        configuration: fromPlain({}),
      });
    await backend.close();
  });
  after(() => rm(dir, { recursive: true, force: true }));

  /** Runs `gex ARGS | head -1` in bash: gex's exit code, its stderr and what head printed. */
  function throughHead(
    args: string[],
    env: NodeJS.ProcessEnv,
  ): Promise<{ code: number; stderr: string; head: string }> {
    const quoted = [process.execPath, gexBin, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = spawn('bash', ['-c', `${quoted} 2>"$ERR" | head -1; exit "\${PIPESTATUS[0]}"`], {
      env: { ...process.env, ...KEY, ...env, ERR: path.join(dir, 'stderr.txt') },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let head = '';
    child.stdout.on('data', (d) => (head += d));
    return new Promise((resolve, reject) =>
      child.on('close', (code) => {
        readFile(path.join(dir, 'stderr.txt'), 'utf8').then(
          (stderr) => resolve({ code: code ?? -1, head, stderr }),
          reject,
        );
      }),
    );
  }

  it('gex configs list | head -1: exit 0, one line, nothing on stderr', async () => {
    const result = await throughHead(['configs', 'list', '--store', store], {});
    assert.equal(result.stderr, '');
    assert.equal(result.code, 0);
    assert.match(result.head, /^\d+\tconfig \d+ x+\tversion 1/);
    assert.equal(result.head.split('\n').filter(Boolean).length, 1);
  });

  it('gex run --log-level debug | head -1: the run carries on, writes its tables and exits 0', async () => {
    const api = await HoldingApi.start(200);
    try {
      api.release();
      const data = path.join(dir, 'run');
      await mkdir(data, { recursive: true });
      await writeFile(path.join(data, 'config.json'), JSON.stringify({ parameters: pagedParameters(api) }));
      const result = await throughHead(['run', '--data-dir', data, '--log-level', 'debug'], {});
      assert.equal(result.stderr, '');
      assert.equal(result.code, 0);
      assert.match(result.head, /DEBUG Locked the data folder/);
      const table = await readFile(path.join(data, 'out', 'tables', 'b.users'), 'utf8');
      assert.equal(table.trim().split('\n').length, 1 + 199);
      assert.ok(existsSync(path.join(data, 'out', 'state.json')));
    } finally {
      await api.close();
    }
  });
});
