import type { Logger } from '../../common/logger.js';
import type { OrphanCheck, StorageJobLiveness } from '../../store/tables/index.js';
import type { SweepCounts, SweepOptions } from '../../store/files/object-sweep.js';
import type { BackgroundService } from '../background-services.js';
import { StorageJobRunner, workerGone } from './storage-job-runner.js';

/** Expired files are deleted this often besides when a project's files are listed or prepared. */
const FILE_PURGE_INTERVAL_MS = 60 * 60 * 1000;
/** The object store is swept of what no file names this often (the first sweep one interval after start). */
const OBJECT_SWEEP_INTERVAL_MS = 60 * 60 * 1000;
/** how often a server on a PostgreSQL store looks for Storage jobs of servers that are gone */
const ORPHAN_CHECK_MS = 5000;

/** What the storage jobs need of the store (EmbeddedBackend provides it; each part optional). */
export interface StorageJobStore {
  /** ends `error` the Storage jobs of processes that are gone (`isGone`); returns their ids */
  endOrphanedJobs?(isGone: OrphanCheck): Promise<number[]>;
  /** Storage jobs' liveness told by the database, where it can tell it across machines (PostgreSQL) */
  storageJobLiveness?(onLost: (error: Error) => void): StorageJobLiveness | undefined;
  /** deletes expired files of every project; returns how many */
  purgeExpiredFiles?(): Promise<number>;
  /** sweeps the object store of objects and uploads no file names; undefined: nothing to sweep, or another process sweeps */
  sweepObjects?(options: SweepOptions): Promise<SweepCounts | undefined>;
}

export interface StorageJobSettings {
  logger?: Logger;
  /** Storage jobs (imports, exports) this process runs at once (default 2) */
  concurrency?: number;
  /** how often expired files are deleted (default hourly; they are also refused and purged when read) */
  filePurgeIntervalMs?: number;
  /** how often Storage jobs of dead servers are looked for (PostgreSQL; default 5 s) */
  orphanCheckIntervalMs?: number;
  /** how often the object store is swept (default hourly) */
  objectSweepIntervalMs?: number;
  /** the object sweep's clock and grace (tests) */
  objectSweep?: Pick<SweepOptions, 'now' | 'graceMs' | 'pageSize'>;
}

/** A timer's work as a service: `first` once at start, then `work` every `ms` (unref'd; none: never) until stop. */
function interval(
  name: string,
  ms: number | undefined,
  work: () => void,
  first?: () => Promise<void>,
): BackgroundService {
  let timer: NodeJS.Timeout | undefined;
  return {
    name,
    start: async () => {
      await first?.();
      if (ms === undefined) return;
      timer = setInterval(work, ms);
      timer.unref();
    },
    stop: async () => clearInterval(timer),
  };
}

/**
 * The storage jobs of a server (imports and exports through File Storage run after their 202):
 * their runner, the end of jobs whose server died (at start; on PostgreSQL also every few seconds,
 * for servers on other machines, told by liveness locks) and the purge of expired files. The
 * services are in start order.
 */
export function storageJobServices(
  store: StorageJobStore,
  settings: StorageJobSettings = {},
): { runner: StorageJobRunner; services: BackgroundService[] } {
  const { logger } = settings;
  const liveness = store.storageJobLiveness?.((error) =>
    logger?.error(`Storage jobs' liveness locks lost (${error.message}): other servers may end this one's jobs`),
  );
  const runner = new StorageJobRunner({ concurrency: settings.concurrency, logger, liveness });
  // jobs of a process that died (kill -9, a crash) while they ran: their transaction never committed
  const endOrphans = async () => {
    const orphans = await store.endOrphanedJobs?.(liveness?.orphans ?? { gone: workerGone });
    if (orphans?.length)
      logger?.warn({ jobs: orphans }, `Ended ${orphans.length} Storage jobs of a server that stopped while they ran`);
  };
  const services: BackgroundService[] = [
    { name: "storage jobs' liveness locks", start: async () => undefined, stop: async () => liveness?.close() },
    { name: 'storage jobs', start: async () => undefined, stop: () => runner.close() },
    // at start; on PostgreSQL also every few seconds, for servers on other machines
    interval(
      'storage job orphan check',
      liveness ? (settings.orphanCheckIntervalMs ?? ORPHAN_CHECK_MS) : undefined,
      () => void endOrphans().catch((error: unknown) => logger?.warn({ err: error }, 'Storage job check failed')),
      endOrphans,
    ),
    interval(
      'file purge',
      settings.filePurgeIntervalMs ?? FILE_PURGE_INTERVAL_MS,
      () => void store.purgeExpiredFiles?.().catch(() => undefined),
    ),
    objectSweep(store, settings),
  ];
  return { runner, services };
}

/** The counts of a sweep as a log line's sentence (numbers only: no key is ever logged). */
export function describeSweep(counts: SweepCounts, ms: number): string {
  return (
    `Object store swept in ${ms} ms${counts.interrupted ? ' (stopped early)' : ''}: ` +
    `${counts.objects} objects, ${counts.deleted} deleted (no file names them), ${counts.recent} too recent to judge, ` +
    `${counts.foreign} not files' (left); ${counts.uploads} unfinished uploads, ${counts.aborted} aborted`
  );
}

/**
 * The sweep of the object store (object-sweep.ts): every `objectSweepIntervalMs`, one sweep at a
 * time in this process, stopped between pages when the service stops. A sweep that found nothing
 * to do logs at debug; one that removed something, at info; a failure, a warning.
 */
function objectSweep(store: StorageJobStore, settings: StorageJobSettings): BackgroundService {
  const { logger } = settings;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopping = false;
  const sweep = () => {
    if (running || stopping || !store.sweepObjects) return;
    const started = Date.now();
    running = store
      .sweepObjects({ ...settings.objectSweep, stopped: () => stopping })
      .then((counts) => {
        if (!counts) return;
        const line = describeSweep(counts, Date.now() - started);
        if (counts.deleted > 0 || counts.aborted > 0) logger?.info(line);
        else logger?.debug(line);
      })
      .catch((error: unknown) =>
        logger?.warn(`Object store sweep failed (tried again in the next interval): ${(error as Error).message}`),
      )
      .finally(() => (running = undefined));
  };
  return {
    name: 'object store sweep',
    start: async () => {
      if (!store.sweepObjects) return;
      timer = setInterval(sweep, settings.objectSweepIntervalMs ?? OBJECT_SWEEP_INTERVAL_MS);
      timer.unref();
    },
    stop: async () => {
      stopping = true;
      clearInterval(timer);
      await running;
    },
  };
}
