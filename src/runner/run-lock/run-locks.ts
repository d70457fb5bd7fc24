import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { dataFolderFailure } from '../../extractor/folder-guard.js';
import { describeHolder, LockFile } from '../../common/lock-file.js';
import type { RunLockAdapter } from '../../store/run-lock/run-lock-adapter.js';

/** The data folder's lock file: one run per data folder. */
export const DATA_DIR_LOCK_FILE = '.gex-run.lock';

/** Time as the lock wait sees it (tests pass a fake one instead of sleeping). */
export interface LockClock {
  now(): number;
  /** resolves after `ms`; rejects with `signal.reason` once it is aborted */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: LockClock = {
  now: () => Date.now(),
  async sleep(ms, signal) {
    try {
      await sleep(ms, undefined, { signal });
    } catch (error) {
      throw signal?.aborted ? signal.reason : error;
    }
  },
};

/** One lock a run needs: taken without waiting, or a description of who holds it. */
export interface RunLock {
  /** "the data folder /data", "configuration 12 of ex-generic-v2" */
  readonly what: string;
  tryAcquire(): Promise<true | string>;
  release(): Promise<void>;
  /** what the user can do besides waiting (e.g. remove a lock file of a vanished host) */
  readonly hint?: string;
}

export interface WaitOptions {
  /** how long to wait for a lock held by another run; 0 = fail at once */
  waitMs: number;
  clock?: LockClock;
  /** cancels the wait (a stop signal): rejects with its reason */
  signal?: AbortSignal;
  logger: Logger;
  /** how often the lock is tried again */
  pollMs?: number;
  /** how often a waiting run says it still waits */
  reportEveryMs?: number;
}

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

/** Takes `lock`, waiting up to `waitMs` for its holder; a lock still held fails with a UserError naming the holder. */
export async function acquireRunLock(lock: RunLock, options: WaitOptions): Promise<void> {
  const { logger, waitMs } = options;
  const clock = options.clock ?? systemClock;
  const pollMs = options.pollMs ?? 1000;
  const reportEveryMs = options.reportEveryMs ?? 30_000;
  let holder = await lock.tryAcquire();
  if (holder === true) return;
  const busy = (prefix: string, h: string) =>
    new UserError(
      'GEX_RUN_LOCKED',
      `${prefix} gex run is using ${lock.what}: ${h}.${lock.hint ? ` ${lock.hint}` : ''}`,
    );
  if (waitMs <= 0) throw busy('Another', `${holder}. Run again when it has finished, or wait for it with --wait`);
  const started = clock.now();
  let reported = started;
  logger.info(`Waiting up to ${seconds(waitMs)} for ${lock.what}, in use by another gex run: ${holder}`);
  for (;;) {
    const waited = clock.now() - started;
    if (waited >= waitMs) throw busy(`Waited ${seconds(waited)}; another`, holder);
    await clock.sleep(Math.min(pollMs, waitMs - waited), options.signal);
    holder = await lock.tryAcquire();
    if (holder === true) {
      logger.info(`Took ${lock.what} after waiting ${seconds(clock.now() - started)}`);
      return;
    }
    if (clock.now() - reported >= reportEveryMs) {
      reported = clock.now();
      logger.info(`Still waiting for ${lock.what} (${seconds(reported - started)} of ${seconds(waitMs)}): ${holder}`);
    }
  }
}

/** The data folder's lock: a lock file in the folder (created with it). */
export function dataDirLock(dataDir: string, running: string): RunLock {
  const file = path.join(dataDir, DATA_DIR_LOCK_FILE);
  const lock = new LockFile(file, running);
  return {
    what: `the data folder ${dataDir}`,
    hint: `If that run is gone (another host or container), remove ${file}.`,
    async tryAcquire() {
      try {
        mkdirSync(dataDir, { recursive: true });
      } catch (error) {
        throw dataFolderFailure(error, dataDir, 'create the data folder');
      }
      try {
        const attempt = lock.tryAcquire();
        return attempt.acquired ? true : describeHolder(attempt.holder);
      } catch (error) {
        // a data folder gex cannot write: said as such (exit 1), before anything else happens
        throw dataFolderFailure(error, file, 'create the run lock');
      }
    },
    async release() {
      lock.release();
    },
  };
}

/** The configuration a `--config-id` run runs, and the store that keeps it (and its locks). */
export interface StoredConfiguration {
  runLocks: RunLockAdapter;
  componentId: string;
  configId: string;
}

/**
 * The configuration's lock, as its store offers it (src/store/run-lock/): SQLite — a lock file in
 * `<database>.run-locks/`; PostgreSQL — a session advisory lock; a remote Storage API offers no
 * lock, so there is none (said in the log).
 */
export function configurationLock(config: StoredConfiguration, running: string, logger: Logger): RunLock | null {
  const what = `configuration ${config.configId} of ${config.componentId}`;
  const lock = config.runLocks.configurationLock({
    componentId: config.componentId,
    configId: config.configId,
    running,
    onLost: (error) =>
      logger.warn(
        `The lock of ${what} was lost with its database session (${error.message}): another run of it could start now`,
      ),
  });
  if (!lock) {
    logger.info(
      `No configuration lock on a remote Storage API: nothing stops another run of ${what} elsewhere (the data folder is still locked)`,
    );
    return null;
  }
  return { what, hint: lock.hint, tryAcquire: () => lock.tryAcquire(), release: () => lock.release() };
}

/**
 * Takes a run's locks in a fixed order — data folder, then configuration — so two waiting runs
 * never hold one each; returns a release of both (safe to call more than once).
 */
export async function lockRun(locks: Array<RunLock | null>, options: WaitOptions): Promise<() => Promise<void>> {
  const taken: RunLock[] = [];
  const releaseAll = async () => {
    for (const lock of taken.splice(0).reverse()) await lock.release().catch(() => undefined);
  };
  try {
    for (const lock of locks) {
      if (!lock) continue;
      taken.push(lock); // a failed attempt may still hold a connection: release() closes it
      await acquireRunLock(lock, options);
      options.logger.debug(`Locked ${lock.what}`);
    }
  } catch (error) {
    await releaseAll();
    throw error;
  }
  return releaseAll;
}

/** `--wait` as given: absent → 0 (fail at once), the bare flag → an hour, else seconds. */
export function parseWaitOption(value: string | undefined): number {
  if (value === undefined) return 0;
  if (value.trim() === '') return DEFAULT_WAIT_MS;
  const text = value.trim();
  if (!/^\d+(\.\d+)?$/.test(text))
    throw new UserError(
      'GEX_CLI_USAGE',
      `--wait takes a number of seconds (or nothing for ${seconds(DEFAULT_WAIT_MS)}), got "${value}"`,
    );
  return Math.round(Number(text) * 1000);
}

export const DEFAULT_WAIT_MS = 3600_000;

export interface RunLockRequest extends WaitOptions {
  dataDir: string;
  /** the stored configuration a `--config-id` run runs; none for a data-folder run */
  stored?: StoredConfiguration;
  /** the run in words, written into lock files for whoever finds them taken */
  running: string;
}

/** The locks of one `gex run`: its data folder and (for a stored configuration) the configuration. */
export async function lockForRun(request: RunLockRequest): Promise<() => Promise<void>> {
  const locks: Array<RunLock | null> = [dataDirLock(request.dataDir, request.running)];
  if (request.stored) locks.push(configurationLock(request.stored, request.running, request.logger));
  return lockRun(locks, request);
}
