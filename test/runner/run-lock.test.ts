import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
  existsSync,
  lstatSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RunCancelled } from '../../src/common/cancellation.js';
import { ApplicationError, UserError } from '../../src/common/errors.js';
import { silentLogger } from '../../src/common/logger.js';
import { describeHolder, LockFile, type LockHolder } from '../../src/common/lock-file.js';
import { holderLiveness, processStartMark } from '../../src/common/process-liveness.js';
import {
  acquireRunLock,
  configurationLock,
  DEFAULT_WAIT_MS,
  parseWaitOption,
  type LockClock,
  type RunLock,
} from '../../src/runner/run-lock/run-locks.js';
import { verifyTablesOnDisk } from '../../src/runner/verify-tables.js';
import { NO_RUN_LOCKS } from '../../src/store/run-lock/run-lock-adapter.js';

/** A clock whose sleeps only move its time forward. */
function fakeClock(): LockClock & { slept: number[] } {
  let t = 1_000_000;
  const slept: number[] = [];
  return {
    slept,
    now: () => t,
    async sleep(ms, signal) {
      if (signal?.aborted) throw signal.reason;
      slept.push(ms);
      t += ms;
    },
  };
}

/** A lock held by someone until attempt `freeAt` (Infinity: never). */
function fakeLock(freeAt: number): RunLock & { attempts: number } {
  return {
    what: 'the data folder /d',
    attempts: 0,
    async tryAcquire() {
      return ++this.attempts >= freeAt
        ? true
        : 'pid 7 on host h since 2026-01-01T00:00:00.000Z, running configuration 1 of c';
    },
    async release() {},
  };
}

function recordingLogger(): { logger: ReturnType<typeof silentLogger>; lines: string[] } {
  const lines: string[] = [];
  const logger = silentLogger();
  logger.info = ((msg: string) => void lines.push(msg)) as typeof logger.info;
  return { logger, lines };
}

describe('run locks: waiting (injected clock, no sleeping)', () => {
  it('fails at once without --wait, naming the holder and --wait', async () => {
    const lock = fakeLock(Infinity);
    await assert.rejects(
      acquireRunLock(lock, { waitMs: 0, clock: fakeClock(), logger: silentLogger() }),
      (e: Error) =>
        e instanceof UserError &&
        /^Another gex run is using the data folder \/d: pid 7 on host h since 2026-01-01T00:00:00.000Z, running configuration 1 of c\. .*--wait/.test(
          e.message,
        ),
    );
    assert.equal(lock.attempts, 1);
  });

  it('waits, says every 30 s that it still waits, and takes the lock once it is free', async () => {
    const clock = fakeClock();
    const { logger, lines } = recordingLogger();
    const lock = fakeLock(95); // free at the 95th attempt: after 94 polls of 1 s
    await acquireRunLock(lock, { waitMs: 600_000, clock, logger });
    assert.equal(lock.attempts, 95);
    assert.equal(
      clock.slept.reduce((a, b) => a + b, 0),
      94_000,
    );
    assert.match(lines[0], /^Waiting up to 600 s for the data folder \/d, in use by another gex run: pid 7/);
    assert.deepEqual(
      lines.filter((l) => l.startsWith('Still waiting')).map((l) => l.slice(0, 51)),
      [
        'Still waiting for the data folder /d (30 s of 600 s',
        'Still waiting for the data folder /d (60 s of 600 s',
        'Still waiting for the data folder /d (90 s of 600 s',
      ],
    );
    assert.equal(lines.at(-1), 'Took the data folder /d after waiting 94 s');
  });

  it('gives up after the bounded wait, naming the holder', async () => {
    const clock = fakeClock();
    await assert.rejects(
      acquireRunLock(fakeLock(Infinity), { waitMs: 5_500, clock, logger: silentLogger() }),
      (e: Error) => /^Waited 6 s; another gex run is using the data folder \/d: pid 7 on host h/.test(e.message),
    );
    assert.deepEqual(clock.slept, [1000, 1000, 1000, 1000, 1000, 500]);
  });

  it('a stop signal ends the wait with the cancellation', async () => {
    const controller = new AbortController();
    const clock = fakeClock();
    const lock = fakeLock(Infinity);
    const tries = lock.tryAcquire.bind(lock);
    lock.tryAcquire = async () => {
      if (lock.attempts === 3) controller.abort(new RunCancelled('SIGTERM'));
      return tries();
    };
    await assert.rejects(
      acquireRunLock(lock, { waitMs: 60_000, clock, logger: silentLogger(), signal: controller.signal }),
      RunCancelled,
    );
    assert.equal(lock.attempts, 4);
  });

  it('--wait: absent = fail at once, bare = an hour, else seconds; nonsense is refused', () => {
    assert.equal(parseWaitOption(undefined), 0);
    assert.equal(parseWaitOption(''), DEFAULT_WAIT_MS);
    assert.equal(parseWaitOption('90'), 90_000);
    assert.equal(parseWaitOption('0.5'), 500);
    assert.throws(() => parseWaitOption('-1'), UserError);
    assert.throws(() => parseWaitOption('1e9x'), UserError);
  });
});

describe('run locks: the lock file', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gex-lockfile-'));
    file = path.join(dir, '.gex-run.lock');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const holder = (over: Partial<LockHolder>): LockHolder => ({
    pid: process.pid,
    host: os.hostname(),
    since: '2026-01-01T00:00:00.000Z',
    configuration: 'configuration 1 of c',
    token: 't',
    ...over,
  });
  const plant = (h: LockHolder | string) => writeFileSync(file, typeof h === 'string' ? h : JSON.stringify(h));

  it('is created with pid, host, start time and configuration; a second holder is refused; release removes it', () => {
    const first = new LockFile(file, 'configuration 9 of ex-generic-v2', () => new Date('2026-11-23T10:00:00.000Z'));
    assert.deepEqual(first.tryAcquire(), { acquired: true });
    const written = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(written.pid, process.pid);
    assert.equal(written.host, os.hostname());
    assert.equal(written.since, '2026-11-23T10:00:00.000Z');
    assert.equal(written.configuration, 'configuration 9 of ex-generic-v2');
    const second = new LockFile(file, 'other');
    const attempt = second.tryAcquire();
    assert.equal(attempt.acquired, false);
    assert.equal(attempt.acquired === false && attempt.holder?.pid, process.pid);
    first.release();
    assert.equal(existsSync(file), false);
    assert.deepEqual(second.tryAcquire(), { acquired: true });
    second.release();
  });

  it('takes over the lock of a dead pid', () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    plant(holder({ pid: dead }));
    const lock = new LockFile(file, 'mine');
    assert.deepEqual(lock.tryAcquire(), { acquired: true });
    assert.equal(JSON.parse(readFileSync(file, 'utf8')).pid, process.pid);
    lock.release();
  });

  it('takes over a lock whose pid now belongs to another process (pid reused after a kill -9)', () => {
    assert.ok(processStartMark(), 'this host has /proc');
    plant(holder({ processStart: 'another-boot:123' }));
    assert.equal(holderLiveness(holder({ processStart: 'another-boot:123' })), 'dead');
    const lock = new LockFile(file, 'mine');
    assert.deepEqual(lock.tryAcquire(), { acquired: true });
    lock.release();
  });

  it('never takes over a lock held on another host (its pid cannot be checked)', () => {
    plant(holder({ host: 'elsewhere', pid: 1 }));
    const attempt = new LockFile(file, 'mine').tryAcquire();
    assert.equal(attempt.acquired, false);
    assert.match(describeHolder(attempt.acquired === false ? attempt.holder : null), /^pid 1 on host elsewhere since /);
  });

  it('an unreadable lock file counts as held while fresh (being written) and stale once old (a crash)', () => {
    plant('');
    assert.equal(new LockFile(file, 'mine').tryAcquire().acquired, false);
    const old = new Date(Date.now() - 60_000);
    utimesSync(file, old, old);
    const lock = new LockFile(file, 'mine');
    assert.deepEqual(lock.tryAcquire(), { acquired: true });
    lock.release();
  });

  it('attack: a planted lock file with control characters and a huge body — one short log-safe line, at most 4 KiB read', () => {
    plant(JSON.stringify(holder({ host: 'elsewhere', configuration: 'x\n12:00:00 ERROR forged line\r\u001b[2J' })));
    const attempt = new LockFile(file, 'mine').tryAcquire();
    const text = describeHolder(attempt.acquired === false ? attempt.holder : null);
    assert.doesNotMatch(text, /[\n\r\u001b]/);
    assert.match(text, /running x\?12:00:00 ERROR forged line\?\?\[2J$/);
    // 10 MB of garbage: unparseable, read no further than its head
    writeFileSync(file, `{"pid": 1, "host": "${'h'.repeat(10_000_000)}"}`);
    const huge = new LockFile(file, 'mine').tryAcquire();
    assert.equal(huge.acquired, false);
    assert.equal(huge.acquired === false && huge.holder, null);
  });

  it('attack: a run that found the lock stale a moment before another took it over does not remove the new lock', () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    const staleText = JSON.stringify(holder({ pid: dead, token: 'stale' }));
    plant(staleText);
    const late = new LockFile(file, 'late');
    const quick = new LockFile(file, 'quick');
    assert.deepEqual(quick.tryAcquire(), { acquired: true });
    // the late run now acts on what it read before: the takeover must check the file again
    (late as unknown as { takeOver(text: string): void }).takeOver(staleText);
    assert.equal(JSON.parse(readFileSync(file, 'utf8')).configuration, 'quick');
    assert.equal(late.tryAcquire().acquired, false);
    quick.release();
  });

  it('attack: while another run holds the takeover guard, a stale lock is left to it', () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    plant(holder({ pid: dead }));
    writeFileSync(`${file}.takeover`, '');
    const attempt = new LockFile(file, 'mine').tryAcquire();
    assert.equal(attempt.acquired, false);
    assert.equal(JSON.parse(readFileSync(file, 'utf8')).pid, dead);
    // a guard left by a crash (old) is cleared, and the stale lock then taken over
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${file}.takeover`, old, old);
    const lock = new LockFile(file, 'mine');
    assert.deepEqual(lock.tryAcquire(), { acquired: true });
    lock.release();
    assert.equal(existsSync(`${file}.takeover`), false);
  });

  it('release removes only its own lock (never one another run took meanwhile)', () => {
    const lock = new LockFile(file, 'mine');
    lock.tryAcquire();
    plant(holder({ token: 'someone-else' }));
    lock.release();
    assert.equal(JSON.parse(readFileSync(file, 'utf8')).token, 'someone-else');
  });

  it('attack: a symlink planted as the lock file is neither followed, read nor taken over', () => {
    const target = path.join(dir, 'victim.txt');
    writeFileSync(target, 'precious');
    mkdirSync(path.join(dir, 'sub'));
    const linked = path.join(dir, 'sub', '.gex-run.lock');
    spawnSync('ln', ['-s', target, linked]);
    const old = new Date(Date.now() - 60_000);
    utimesSync(target, old, old);
    const lock = new LockFile(linked, 'mine');
    assert.throws(() => lock.tryAcquire(), {
      name: 'UserError',
      message: /The lock file .*\.gex-run\.lock is a symbolic link, which gex neither reads nor removes/,
    });
    lock.release();
    assert.equal(readFileSync(target, 'utf8'), 'precious');
    assert.ok(lstatSync(linked).isSymbolicLink(), 'the link is left for the user');
  });
});

describe('run locks: a remote Storage API', () => {
  it('offers no configuration lock, and the run says so', async () => {
    const { logger, lines } = recordingLogger();
    const lock = configurationLock(
      { runLocks: NO_RUN_LOCKS, componentId: 'ex-generic-v2', configId: '12' },
      'configuration 12',
      logger,
    );
    assert.equal(lock, null);
    assert.deepEqual(lines, [
      'No configuration lock on a remote Storage API: nothing stops another run of configuration 12 of ex-generic-v2 elsewhere (the data folder is still locked)',
    ]);
  });
});

describe('verifyTablesOnDisk', () => {
  it('passes when every listed table and manifest exists, and fails naming the missing ones', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gex-verify-'));
    try {
      mkdirSync(path.join(dir, 'out', 'tables'), { recursive: true });
      writeFileSync(path.join(dir, 'out', 'tables', 'a'), 'x');
      writeFileSync(path.join(dir, 'out', 'tables', 'a.manifest'), '{}');
      const row = (files: string[]) => ({
        rows: [
          {
            id: null,
            name: '',
            folder: '.',
            stateSaved: false,
            status: 'success' as const,
            requests: 1,
            records: 1,
            tables: files.map((file) => ({ file, rows: 1, bytes: 0, loaded: false })),
            jobs: [],
            durationMs: 1,
          },
        ],
      });
      verifyTablesOnDisk(dir, row(['out/tables/a']));
      assert.throws(
        () => verifyTablesOnDisk(dir, row(['out/tables/a', 'out/tables/b'])),
        (e: Error) =>
          e instanceof ApplicationError &&
          /missing from .*: out\/tables\/b, out\/tables\/b\.manifest\. Did another process change the data folder\?/.test(
            e.message,
          ),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
