import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { NO_WORKER_AFTER_MS } from '../../src/cli/jobs/wait-progress.js';
import { track } from '../support/children.js';
import { gexBin, runGex, startServe } from '../support/cli.js';

const KEY = { GEX_MASTER_KEY: '6c'.repeat(32) };

/** A command running, its output so far, and a way to wait for a line. */
function started(args: string[], env: NodeJS.ProcessEnv) {
  const child = track(
    spawn(process.execPath, [gexBin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code, signal) => resolve(code ?? (signal ? -1 : null))),
  );
  const until = (pattern: RegExp, timeoutMs: number) =>
    new Promise<number>((resolve, reject) => {
      const start = Date.now();
      const timer = setInterval(() => {
        if (pattern.test(stderr) || pattern.test(stdout)) {
          clearInterval(timer);
          resolve(Date.now() - start);
        } else if (Date.now() - start > timeoutMs) {
          clearInterval(timer);
          reject(new Error(`no ${pattern} in ${timeoutMs} ms:\n${stdout}\n${stderr}`));
        }
      }, 50);
    });
  return { child, until, exited, output: () => ({ stdout, stderr }) };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/**
 * Issue 33 item 10: a job queued on a store that nothing runs jobs of waits for good — so
 * `gex jobs run --wait` says so within seconds (the store's worker registry), `gex serve
 * --workers 0` says so at start, and Ctrl-C on the wait says the job keeps running and how to kill it.
 */
describe('gex jobs run --wait and gex serve --workers 0: nothing runs the jobs', function () {
  this.timeout(120_000);
  let dir: string;
  let store: string;
  let api: FixtureServer;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-no-worker-'));
    store = path.join(dir, 'store.sqlite');
    api = await startFixtureServer({ handler: () => Promise.resolve({ body: { data: [{ id: 1 }] } }) });
    env = { ...KEY, GEX_STORE: store, KBC_URL: '', KBC_TOKEN: '' };
    const token = await runGex(['tokens', 'create', '--description', 'ci'], env);
    assert.equal(token.code, 0, token.stderr);
    const created = await runGex(
      [
        'configs',
        'create',
        '--name',
        'shop',
        '--config-id',
        'shop',
        '--set',
        `parameters.api.baseUrl=${api.url}/`,
        '--set',
        'parameters.config.jobs=[{"endpoint":"users","dataField":"data"}]',
      ],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
  });

  after(async () => {
    await api?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('--wait with nothing running jobs says so within seconds; Ctrl-C says the job keeps running and how to kill it', async () => {
    const wait = started(['jobs', 'run', 'shop', '--wait'], env);
    const took = await wait.until(/nothing runs the jobs of this store: start `gex serve --workers 1`/, 20_000);
    assert.ok(took < NO_WORKER_AFTER_MS + 8000, `said after ${took} ms`);
    assert.match(wait.output().stderr, /Job 1: created, and nothing runs/);
    wait.child.kill('SIGINT');
    assert.equal(await wait.exited, 130, 'the exit code of a Ctrl-C');
    assert.match(
      wait.output().stderr,
      /Stopped waiting: job 1 \(created\) keeps running\. Follow it with "gex jobs log 1 --follow"; stop it with "gex jobs kill 1"/,
    );
    const shown = await runGex(['jobs', 'show', '1', '--json'], env);
    assert.equal(JSON.parse(shown.stdout).status, 'created', 'the job itself is untouched');
  });

  it('gex serve --workers 0 says nothing runs its jobs; with a server that runs them, --wait ends and names none', async () => {
    const acceptOnly = await startServe(['--store', store, '--workers', '0'], KEY);
    try {
      assert.match(
        acceptOnly.output(),
        /WARN {2}This server runs no jobs \(--workers 0\), and nothing runs the jobs of this store/,
      );
      const runner = await startServe(['--store', store, '--workers', '1'], KEY);
      try {
        // the job queued while nothing ran (1) runs now, then this one
        const earlier = started(['jobs', 'run', 'shop', '--wait'], env);
        assert.equal(await earlier.exited, 0, earlier.output().stderr);
        assert.doesNotMatch(earlier.output().stderr, /nothing runs/);
        const shown = await runGex(['jobs', 'show', '1', '--json'], env);
        assert.equal(JSON.parse(shown.stdout).status, 'success');
        const another = await startServe(['--store', store, '--workers', '0'], KEY);
        await stop(another.child);
        assert.match(
          another.output(),
          /INFO {2}This server runs no jobs \(--workers 0\); the other servers and workers of the store run 1 at once/,
        );
      } finally {
        await stop(runner.child);
      }
    } finally {
      await stop(acceptOnly.child);
    }
  });
});
