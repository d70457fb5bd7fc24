import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { missingStartFlags, RUN_MEMORY } from '../../src/common/heap-growth.js';
import { gexBin, repoRoot } from '../support/cli.js';

/** Node 22.1+: module.enableCompileCache; Node 22.15+: process.execve (what this Node offers is what is tested). */
const hasCompileCache = Number(process.versions.node.split('.')[0]) >= 22;
const hasExecve = typeof (process as unknown as { execve?: unknown }).execve === 'function';
const newV8 = Number(process.versions.v8.split('.')[0]) >= 12;

/** `env` without Node's own compile cache variables (set, even empty, they decide for Node). */
function withoutNodeCache(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_COMPILE_CACHE: _cache, NODE_DISABLE_COMPILE_CACHE: _disable, ...rest } = env;
  return rest;
}

describe("a gex process's start: a run's compiler flags, the compile cache", function () {
  this.timeout(30_000);
  let dir: string;
  let probe: string;
  let dataDir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gex-process-start-'));
    // every start of the process (before gex's code): its pid and node flags, one line each
    probe = path.join(dir, 'probe.mjs');
    writeFileSync(
      probe,
      `import { appendFileSync } from 'node:fs';\nappendFileSync(process.env.GEX_START_LOG, JSON.stringify({ pid: process.pid, execArgv: process.execArgv }) + '\\n');\n`,
    );
    dataDir = path.join(dir, 'data');
    mkdirSync(dataDir);
    writeFileSync(
      path.join(dataDir, 'config.json'),
      JSON.stringify({
        parameters: { api: { baseUrl: 'http://127.0.0.1:9/' }, config: { jobs: [{ endpoint: 'x' }] } },
      }),
    );
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** The starts of `gex ARGS` under node with `nodeFlags` (the probe's lines), and its exit code. */
  function starts(args: string[], nodeFlags: string[] = [], env: NodeJS.ProcessEnv = {}) {
    const log = path.join(dir, `starts-${Math.random()}.jsonl`);
    const result = spawnSync(process.execPath, [...nodeFlags, '--import', probe, gexBin, ...args], {
      env: { ...process.env, NODE_OPTIONS: '', GEX_START_LOG: log, XDG_CACHE_HOME: path.join(dir, 'cache'), ...env },
      encoding: 'utf8',
    });
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    return {
      code: result.status,
      stderr: result.stderr,
      starts: lines.map((line) => JSON.parse(line) as { pid: number; execArgv: string[] }),
    };
  }

  it('a run on V8 12+ replaces itself once with its start flags (same pid); other commands and Node 20 start once', function () {
    const run = starts(['run', '--data-dir', dataDir, '--dry-run']);
    assert.equal(run.code, 0, run.stderr);
    if (newV8 && hasExecve) {
      assert.equal(run.starts.length, 2, 'started, then replaced once');
      assert.equal(run.starts[1].pid, run.starts[0].pid, 'the same process: no second one');
      for (const flag of RUN_MEMORY.startFlags) assert.ok(run.starts[1].execArgv.includes(flag), flag);
      assert.ok(
        run.starts[1].execArgv.some((flag) => flag.includes('probe.mjs')),
        "the user's own node flags kept",
      );
    } else {
      if (newV8) console.warn('      !!! this Node has no process.execve: a run keeps V8 defaults (documented)');
      assert.equal(run.starts.length, 1);
    }
    // global options before the command still name a run
    assert.equal(
      starts(['--log-level', 'warn', 'run', '--data-dir', dataDir, '--dry-run']).starts.length,
      run.starts.length,
    );
    const check = starts(['check', '--data-dir', dataDir]);
    assert.equal(check.starts.length, 1, 'only a run is restarted');
  });

  it("a compiler flag of the user's wins: no restart, the flag as given", function () {
    if (!newV8) {
      console.warn('      !!! V8 11 (Node 20): gex sets no compiler flag, so there is nothing of the user to win over');
      this.skip();
    }
    const own = starts(['run', '--data-dir', dataDir, '--dry-run'], ['--turbofan']);
    assert.equal(own.code, 0, own.stderr);
    assert.equal(own.starts.length, 1);
    assert.deepEqual(
      own.starts[0].execArgv.filter((flag) => !flag.includes('probe')),
      ['--turbofan', '--import'],
    );
  });

  it('start flags: none on V8 11, none once node has a compiler flag (the user’s, or these after the restart)', () => {
    assert.deepEqual(missingStartFlags([], '', []), []);
    const flags = ['--no-concurrent-recompilation', '--no-turbofan'];
    assert.deepEqual(missingStartFlags(['--enable-source-maps'], '', flags), flags);
    assert.deepEqual(missingStartFlags(flags, '', flags), []);
    assert.deepEqual(missingStartFlags(['--maglev'], '', flags), []);
    assert.deepEqual(missingStartFlags([], '--no_turbofan --max-old-space-size=512', flags), []);
    assert.deepEqual(missingStartFlags(['--optimize-for-size'], '', flags), flags, 'not a compiler flag');
  });

  it('the compile cache is a folder of this user only (0700), never a link or a folder others may write', function () {
    const cacheHome = path.join(dir, 'cache');
    const enable = (env: NodeJS.ProcessEnv) =>
      spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import { enableCompileCache } from ${JSON.stringify(path.join(repoRoot, 'dist', 'src', 'cli', 'process', 'compile-cache.js'))};\nprocess.stdout.write(String(enableCompileCache()));`,
        ],
        { env: { ...withoutNodeCache(process.env), ...env }, encoding: 'utf8' },
      ).stdout;
    const folder = path.join(cacheHome, 'gex', 'compile-cache');
    if (!hasCompileCache) {
      assert.equal(enable({ XDG_CACHE_HOME: cacheHome }), 'undefined', 'Node 20 has none: nothing made');
      return;
    }
    assert.equal(enable({ XDG_CACHE_HOME: cacheHome }), folder);
    assert.equal(lstatSync(folder).mode & 0o777, 0o700);
    assert.equal(enable({ XDG_CACHE_HOME: cacheHome, GEX_COMPILE_CACHE: '0' }), 'undefined', 'turned off');
    // its parent writable by others: someone else could swap the folder for their own
    chmodSync(path.join(cacheHome, 'gex'), 0o777);
    assert.equal(enable({ XDG_CACHE_HOME: cacheHome }), 'undefined', 'a parent others may write');
    chmodSync(path.join(cacheHome, 'gex'), 0o700);
    chmodSync(folder, 0o770);
    assert.equal(enable({ XDG_CACHE_HOME: cacheHome }), 'undefined', 'a folder its group may write');
    // a link planted where the folder goes
    const planted = path.join(dir, 'planted');
    mkdirSync(path.join(planted, 'gex'), { recursive: true, mode: 0o700 });
    symlinkSync(path.join(dir, 'elsewhere'), path.join(planted, 'gex', 'compile-cache'));
    mkdirSync(path.join(dir, 'elsewhere'), { mode: 0o700 });
    assert.equal(enable({ XDG_CACHE_HOME: planted }), 'undefined', 'a link');
    // gex itself uses it: a run leaves V8's code of its modules there
    const run = starts(['check', '--data-dir', dataDir], [], { XDG_CACHE_HOME: path.join(dir, 'used') });
    assert.equal(run.code, 0, run.stderr);
    assert.ok(lstatSync(path.join(dir, 'used', 'gex', 'compile-cache')).isDirectory());
  });
});
