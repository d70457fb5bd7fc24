import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gexBin } from '../support/cli.js';
import { runGexInProcess } from '../support/in-process-gex.js';
import { POSTGRES_VARIABLE, postgresBackend, TEST_KEY, withPostgresClient } from '../support/store.js';

/** Everything below `dir` (folders end in "/"), sorted: what a command may not change. */
async function listing(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.map((e) => path.relative(dir, path.join(e.parentPath, e.name)) + (e.isDirectory() ? '/' : '')).sort();
}

/** `gex` run in `cwd`: relative store paths (`htp://x` is one) land there. */
async function runGexIn(
  cwd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; output: string }> {
  const { code, stdout, stderr } = await runGexInProcess(args, env, { cwd });
  return { code, output: stdout + stderr };
}

/** The permission bits of a file. */
async function mode(file: string): Promise<number> {
  return (await stat(file)).mode & 0o777;
}

/**
 * `--store` mistakes in temporary folders: commands that only read create nothing, a location of
 * the wrong kind is exit 1 with what was expected (gex run in this process), and the files of a new
 * store are private (0600) whatever the umask (real processes: the umask is the process's).
 */
describe('--store mistakes', function () {
  this.timeout(60_000);
  let dir: string;
  // no GEX_MASTER_KEY: the key file is what a first use would create
  const noKey = { GEX_MASTER_KEY: '', GEX_KEY_FILE: '', GEX_STORE: '', KBC_URL: '', KBC_TOKEN: '' };

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-store-mistakes-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  // every command that only reads or runs: none creates a store, a -wal file or a master key
  const readOrRun = [
    ['configs', 'list'],
    ['configs', 'get', '1'],
    ['configs', 'versions', '1'],
    ['configs', 'export', '1'],
    ['rows', 'list', '1'],
    ['state', 'show', '1'],
    ['tables', 'list'],
    ['tables', 'show', 'in.c-b.t'],
    ['tables', 'preview', 'in.c-b.t'],
    ['components', 'list'],
    ['check', '--config-id', '1'],
    ['run', '--config-id', '1'],
    ['run', '--config-id', '1', '--dry-run'],
  ];
  for (const command of readOrRun) {
    it(`${command.join(' ')} on a missing store exits 1 with "no store at …" and creates nothing`, async () => {
      await mkdir(path.join(dir, 'sub'));
      const before = await listing(dir);
      for (const store of ['new.sqlite', path.join('sub', 'deeper', 'new.sqlite')]) {
        // a run's data folder is elsewhere: what matters here is the store's folder
        const result = await runGexInProcess([...command, '--store', path.join(dir, store)], {
          ...noKey,
          KBC_DATADIR: path.join(os.tmpdir(), 'gex-no-such-data-folder'),
        });
        assert.equal(result.code, 1, result.stderr);
        assert.ok(result.stderr.includes(`No store at ${path.join(dir, store)}`), result.stderr);
        assert.match(
          result.stderr,
          /only reads or runs, so it creates no store\. Check --store \(\$KBC_URL, \$GEX_STORE\), or create the store with "gex configs import FILE"/,
        );
      }
      assert.deepEqual(await listing(dir), before, 'no store, -wal, folder or key file was created');
    });
  }

  it('run --config-id with a mistyped store next to an existing one creates nothing (and no key beside it)', async () => {
    const store = path.join(dir, 'gex-store.sqlite');
    assert.equal((await runGexInProcess(['tokens', 'create', '--description', 'x', '--store', store], noKey)).code, 0);
    const before = await listing(dir);
    const result = await runGexInProcess(
      ['run', '--config-id', '1', '--store', path.join(dir, 'gex-stor.sqlite'), '--data-dir', path.join(dir, 'data')],
      noKey,
    );
    assert.equal(result.code, 1, result.stderr);
    assert.ok(result.stderr.includes(`No store at ${path.join(dir, 'gex-stor.sqlite')}`), result.stderr);
    assert.deepEqual(await listing(dir), before, 'no store, -wal, key file, lock or data folder was created');
  });

  it('a read-only command on an existing store without its key file creates no key file', async () => {
    const store = path.join(dir, 's.sqlite');
    assert.equal((await runGexInProcess(['tokens', 'create', '--description', 'x', '--store', store], noKey)).code, 0);
    await rm(`${store}.key`);
    const before = await listing(dir);
    const result = await runGexInProcess(['configs', 'list', '--store', store], noKey);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /No master key: the key file .*s\.sqlite\.key does not exist and GEX_MASTER_KEY is not set/,
    );
    assert.deepEqual(await listing(dir), before);
  });

  it('--store naming a folder is exit 1 saying a SQLite file path was expected (and creates no key file)', async () => {
    await mkdir(path.join(dir, 'folder'));
    for (const command of [
      ['configs', 'list'],
      ['configs', 'import', path.join(dir, 'none.json')],
      ['tokens', 'create', '--description', 'x'],
    ]) {
      const result = await runGexInProcess([...command, '--store', path.join(dir, 'folder')], noKey);
      assert.equal(result.code, 1, result.stderr);
      assert.match(
        result.stderr,
        /The store .*folder is a folder: expected a SQLite file path, a postgres:\/\/ \(or postgresql:\/\/\) URL, or the http\(s\):\/\/ address of a Storage API/,
      );
    }
    assert.deepEqual(await listing(dir), ['folder/']);
  });

  it('--store naming a text file is exit 1 saying it is not a SQLite database, and leaves the file alone', async () => {
    const text = path.join(dir, 'notes.txt');
    await writeFile(text, 'my notes\n');
    for (const command of [
      ['configs', 'list'],
      ['tokens', 'create', '--description', 'x'],
    ]) {
      const result = await runGexInProcess([...command, '--store', text], noKey);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /The store .*notes\.txt is not a SQLite database: expected a SQLite file path/);
    }
    assert.deepEqual(await listing(dir), ['notes.txt']);
    assert.equal((await stat(text)).size, 'my notes\n'.length);
  });

  it('--store with an unknown URL scheme is exit 1 naming the scheme (password hidden), for every command', async () => {
    const commands = [
      ['configs', 'list'],
      ['tokens', 'create', '--description', 'x'],
      ['serve', '--port', '0'],
      ['run', '--config-id', '1'],
    ];
    for (const store of ['htp://x', 'mysql://user:hunter2@db/gex']) {
      for (const command of commands) {
        const { code, output } = await runGexIn(dir, [...command, '--store', store], {
          ...noKey,
          KBC_DATADIR: path.join(dir, 'data'),
        });
        assert.equal(code, 1, output);
        assert.match(
          output,
          /has an unknown URL scheme "(htp|mysql):\/\/": expected a SQLite file path, a postgres:\/\/ \(or postgresql:\/\/\) URL, or the http\(s\):\/\/ address of a Storage API/,
        );
        assert.ok(!output.includes('hunter2'), 'the password is not printed');
      }
    }
    assert.deepEqual(
      await listing(dir),
      [],
      'no store named after the URL (./htp:/x) was created in the working folder',
    );
  });

  it('a new store file, its -wal and -shm and its key file are created 0600 under umask 000', async () => {
    const store = path.join(dir, 'new.sqlite');
    // `gex serve` keeps the database open, so the -wal and -shm files can be seen
    const child = spawn(
      '/bin/sh',
      ['-c', `umask 000 && exec "${process.execPath}" "${gexBin}" serve --port 0 --store "${store}"`],
      {
        env: { ...process.env, ...noKey },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      let output = '';
      await new Promise<void>((resolve, reject) => {
        const onData = (chunk: Buffer) => {
          output += chunk;
          if (output.includes('listening on')) resolve();
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        child.on('exit', (code) => reject(new Error(`gex serve exited with ${code}: ${output}`)));
      });
      for (const file of [store, `${store}-wal`, `${store}-shm`, `${store}.key`])
        assert.equal((await mode(file)).toString(8), '600', file);
      // gex serve creates the store it is named, and says so: a mistyped path shows at start
      assert.ok(output.includes(`Created a new master key file ${store}.key`), output);
      assert.ok(output.includes(`Created a new, empty store ${store}`), output);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
    }
  });

  it('a store created by a CLI command under umask 000 is 0600, and a later read works', async () => {
    const store = path.join(dir, 'cli.sqlite');
    const created = await new Promise<number>((resolve) => {
      const child = spawn(
        '/bin/sh',
        ['-c', `umask 000 && exec "${process.execPath}" "${gexBin}" tokens create --description x --store "${store}"`],
        {
          env: { ...process.env, ...noKey },
          stdio: 'ignore',
        },
      );
      child.on('exit', (code) => resolve(code ?? -1));
    });
    assert.equal(created, 0);
    assert.equal((await mode(store)).toString(8), '600');
    assert.equal((await mode(`${store}.key`)).toString(8), '600');
    const listed = await runGexInProcess(['configs', 'list', '--store', store], noKey);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /No configurations of ex-generic-v2/);
  });

  const postgres = postgresBackend();
  if (postgres) {
    it('configs list and run on a PostgreSQL database without a store exit 1 with "no store" and create no tables', async () => {
      const fresh = await postgres.fresh();
      try {
        const run = await runGexInProcess(
          ['run', '--config-id', '1', '--store', fresh.location, '--data-dir', path.join(dir, 'data')],
          TEST_KEY,
        );
        assert.equal(run.code, 1, run.stderr);
        assert.match(
          run.stderr,
          /No store in the PostgreSQL database .*: this command only reads or runs, so it creates no store/,
        );
        const result = await runGexInProcess(['configs', 'list', '--store', fresh.location], TEST_KEY);
        assert.equal(result.code, 1, result.stderr);
        assert.match(
          result.stderr,
          /No store in the PostgreSQL database .*: this command only reads or runs, so it creates no store/,
        );
        const schema = new URL(fresh.location).searchParams.get('options')!.replace('-c search_path=', '');
        const tables = await withPostgresClient(process.env[POSTGRES_VARIABLE]!, (c) =>
          c.query('SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1', [schema]),
        );
        assert.equal(tables.rows[0].n, 0, 'no table was created');
      } finally {
        await fresh.dispose();
      }
    });
  }
});
