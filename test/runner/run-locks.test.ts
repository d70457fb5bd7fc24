import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../support/cli.js';
import { HoldingApi, pagedParameters, startGex, storePagedConfiguration } from '../support/gex-process.js';
import { postgresBackend, sqliteBackend, TEST_KEY, type BackendFactory, type FreshStore } from '../support/store.js';

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('gex run: one run per data folder (real processes)', function () {
  this.timeout(30_000);
  let api: HoldingApi;
  let dir: string;
  let data: string;

  beforeEach(async () => {
    api = await HoldingApi.start(3);
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-dirlock-'));
    data = path.join(dir, 'data');
    await mkdir(data);
    await writeFile(path.join(data, 'config.json'), JSON.stringify({ parameters: pagedParameters(api) }));
  });
  afterEach(async () => {
    await api.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a second run on the same data folder fails at once (exit 1) naming the holder; the first run is untouched', async () => {
    const first = startGex(['run', '--data-dir', data], {});
    await api.requested(3);
    const started = Date.now();
    const second = startGex(['run', '--data-dir', data], {});
    const exit = await second.exited;
    assert.equal(exit.code, 1, second.output());
    assert.ok(Date.now() - started < 5000);
    assert.match(
      second.output(),
      new RegExp(
        `ERROR Another gex run is using the data folder ${escape(data)}: pid ${first.child.pid} on host ${escape(os.hostname())} since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z, ` +
          'running the config.json of the data folder\\. Run again when it has finished, or wait for it with --wait',
      ),
    );
    assert.equal(api.requests, 3, 'the second run sent no request');
    api.release();
    assert.equal((await first.exited).code, 0, first.output());
    assert.equal((await readFile(path.join(data, 'out', 'tables', 'b.users'), 'utf8')).trim().split('\n').length, 3);
    assert.equal(existsSync(path.join(data, '.gex-run.lock')), false);
  });

  it('with --wait the second run waits for the first, then runs', async () => {
    const first = startGex(['run', '--data-dir', data], {});
    await api.requested(3);
    const second = startGex(['run', '--data-dir', data, '--wait', '30'], {});
    await second.waitFor(/Waiting up to 30 s for the data folder .*: pid \d+ on host/);
    assert.equal(api.requests, 3);
    api.release();
    assert.equal((await first.exited).code, 0, first.output());
    assert.equal((await second.exited).code, 0, second.output());
    assert.match(second.output(), /Took the data folder .* after waiting \d+ s/);
    assert.ok(api.requests > 3, 'the second run ran after the first');
    assert.equal((await readFile(path.join(data, 'out', 'tables', 'b.users'), 'utf8')).trim().split('\n').length, 3);
  });

  it('--wait is bounded: the second run gives up naming the holder', async () => {
    const first = startGex(['run', '--data-dir', data], {});
    await api.requested(3);
    const second = startGex(['run', '--data-dir', data, '--wait', '1'], {});
    assert.equal((await second.exited).code, 1);
    assert.match(
      second.output(),
      new RegExp(`Waited 1 s; another gex run is using the data folder ${escape(data)}: pid ${first.child.pid}`),
    );
    first.child.kill('SIGTERM');
    await first.exited;
  });

  it('SIGTERM while waiting with --wait ends the wait: exit 143, summary "cancelled", the holder keeps its lock', async () => {
    const first = startGex(['run', '--data-dir', data], {});
    await api.requested(3);
    const second = startGex(['run', '--data-dir', data, '--wait', '30', '--summary', path.join(dir, 's.json')], {});
    await second.waitFor(/Waiting up to 30 s/);
    second.child.kill('SIGTERM');
    assert.equal((await second.exited).code, 143, second.output());
    assert.equal(JSON.parse(await readFile(path.join(dir, 's.json'), 'utf8')).status, 'cancelled');
    assert.equal(JSON.parse(await readFile(path.join(data, '.gex-run.lock'), 'utf8')).pid, first.child.pid);
    api.release();
    assert.equal((await first.exited).code, 0, first.output());
  });

  it('the stale lock of a dead pid is taken over', async () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    const stale = {
      pid: dead,
      host: os.hostname(),
      since: '2026-01-01T00:00:00.000Z',
      configuration: 'a run that crashed',
      token: 'old',
    };
    await writeFile(path.join(data, '.gex-run.lock'), JSON.stringify(stale));
    api.release();
    const run = startGex(['run', '--data-dir', data], {});
    assert.equal((await run.exited).code, 0, run.output());
    assert.equal(existsSync(path.join(data, '.gex-run.lock')), false);
    assert.ok(existsSync(path.join(data, 'out', 'tables', 'b.users')));
  });

  it('attack: ten processes racing for one stale lock — exactly one takes it', async () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    const file = path.join(data, '.gex-run.lock');
    await writeFile(
      file,
      JSON.stringify({
        pid: dead,
        host: os.hostname(),
        since: '2026-01-01T00:00:00.000Z',
        configuration: 'crashed',
        token: 'old',
      }),
    );
    const module = JSON.stringify(path.join(repoRoot, 'dist', 'src', 'common', 'lock-file.js'));
    // each racer waits for a common start moment, tries once, and holds what it got until every racer
    // has tried (its stdin closes then): a racer that starts late on a loaded machine still races
    // against a held lock, never against one released after a fixed time
    const go = Date.now() + 800;
    const script = `import { LockFile } from ${module};
      while (Date.now() < ${go}) {}
      const attempt = new LockFile(${JSON.stringify(file)}, 'racer').tryAcquire();
      console.log(attempt.acquired ? 'acquired' : 'busy');
      process.stdin.resume();
      process.stdin.on('end', () => process.exit(0));`;
    const children = Array.from({ length: 10 }, () =>
      spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] }),
    );
    const closed = children.map((child) => new Promise((resolve) => child.once('close', resolve)));
    const racers = children.map(
      (child) =>
        new Promise<string>((resolve) => {
          let out = '';
          child.stdout.on('data', (d) => {
            out += d;
            if (out.endsWith('\n')) resolve(out.trim());
          });
          child.on('close', () => resolve(out.trim()));
        }),
    );
    const results = await Promise.all(racers);
    for (const child of children) child.stdin.end();
    await Promise.all(closed);
    assert.deepEqual(results.filter((r) => r === 'acquired').length, 1, results.join(','));
    assert.equal(results.filter((r) => r === 'busy').length, 9);
  });
});

/** Same configuration, two data folders: the configuration lock of each embedded store. */
for (const backend of [sqliteBackend, postgresBackend()].filter((b): b is BackendFactory => b !== undefined)) {
  describe(`gex run --config-id: one run per configuration (${backend.name}, real processes)`, function () {
    this.timeout(30_000);
    let api: HoldingApi;
    let store: FreshStore;
    let dir: string;
    let configId: string;

    beforeEach(async () => {
      api = await HoldingApi.start(3);
      store = await backend.fresh();
      dir = await mkdtemp(path.join(os.tmpdir(), 'gex-configlock-'));
      configId = await storePagedConfiguration(store.location, TEST_KEY, api);
    });
    afterEach(async () => {
      await api.close();
      await store.dispose();
      await rm(dir, { recursive: true, force: true });
    });

    const run = (data: string, extra: string[] = []) =>
      startGex(
        ['run', '--config-id', configId, '--store', store.location, '--data-dir', path.join(dir, data), ...extra],
        TEST_KEY,
      );

    it('a second run of the same configuration in another data folder fails at once naming the holder; with --wait it runs after', async () => {
      const first = run('a');
      await api.requested(3);
      const second = run('b');
      assert.equal((await second.exited).code, 1, second.output());
      const holder =
        backend.name === 'SQLite'
          ? `pid ${first.child.pid} on host ${escape(os.hostname())} since [\\dT:.Z-]+, running configuration ${configId} of ex-generic-v2`
          : `"gex run pid ${first.child.pid} on ${escape(os.hostname())}" from [\\d.:a-f]+ since [\\dT:.Z-]+`;
      assert.match(
        second.output(),
        new RegExp(`Another gex run is using configuration ${configId} of ex-generic-v2: ${holder}\\.`),
      );
      assert.equal(api.requests, 3);
      assert.equal(
        existsSync(path.join(dir, 'b', '.gex-run.lock')),
        false,
        'the second run released its data folder lock',
      );

      const third = run('c', ['--wait', '30']);
      await third.waitFor(/Waiting up to 30 s for configuration/);
      api.release();
      assert.equal((await first.exited).code, 0, first.output());
      assert.equal((await third.exited).code, 0, third.output());
      assert.ok(existsSync(path.join(dir, 'c', 'rows', 'users', 'out', 'tables', 'b.users')));
    });

    it('after kill -9 of the holder a new run succeeds', async () => {
      const first = run('a');
      await api.requested(3);
      first.child.kill('SIGKILL');
      assert.equal((await first.exited).signal, 'SIGKILL');
      // what a killed run leaves: its lock files (the PostgreSQL lock ends with its session)
      assert.ok(existsSync(path.join(dir, 'a', '.gex-run.lock')));
      if (backend.name === 'SQLite') assert.equal(readdirSync(`${store.location}.run-locks`).length, 1);
      api.release();
      const next = run('a');
      assert.equal((await next.exited).code, 0, next.output());
      assert.ok(existsSync(path.join(dir, 'a', 'rows', 'users', 'out', 'tables', 'b.users')));
      assert.equal(existsSync(path.join(dir, 'a', '.gex-run.lock')), false);
      if (backend.name === 'SQLite') assert.deepEqual(readdirSync(`${store.location}.run-locks`), []);
    });
  });
}
