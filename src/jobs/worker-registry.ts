import os from 'node:os';
import {
  identityLiveness,
  parseProcessIdentity,
  thisProcessText,
  type ProcessIdentity,
} from '../common/process-liveness.js';
import type { Database } from '../store/sql/database.js';

/** how often a registered worker says it still runs */
export const HEARTBEAT_MS = 10_000;
/** a worker of another host that has not said so for this long is gone */
export const STALE_MS = 90_000;

type Row = Record<string, unknown>;

/** A worker pool of a `gex serve` or `gex worker` on the store, as its registry row tells. */
export interface RegisteredWorker {
  identity: ProcessIdentity;
  /** jobs it runs at once (0: a `gex serve --workers 0`, which accepts jobs and runs none) */
  capacity: number;
  seen: Date;
}

/**
 * The worker pools of a store (table `queue_workers`): each `gex serve` and `gex worker` registers
 * its pool when it starts (with how many jobs it runs at once), says every HEARTBEAT_MS that it
 * still runs and deregisters when it stops. It tells `gex jobs run --wait` and `gex serve
 * --workers 0` whether anything runs the store's jobs, and a SQLite store's recovery whether a
 * job's worker on another host (a container that got a new name) is gone. Whether a worker of this
 * host runs is asked of the process itself (identityLiveness: at once, after a kill -9 too); of
 * another host, its heartbeat's age (clocks of one store's machines agree within seconds).
 */
export class WorkerRegistry {
  private timer: NodeJS.Timeout | undefined;
  private readonly me = thisProcessText();

  constructor(
    private readonly db: Database,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Registers this process's pool (`capacity` jobs at once) and keeps its row fresh until `unregister`. */
  async register(capacity: number): Promise<void> {
    const now = this.now().toISOString();
    await this.db.run(
      `INSERT INTO queue_workers (identity, host, capacity, started, seen) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (identity) DO UPDATE SET capacity = excluded.capacity, seen = excluded.seen`,
      [this.me, os.hostname(), capacity, now, now],
    );
    clearInterval(this.timer);
    this.timer = setInterval(() => void this.beat(capacity).catch(() => undefined), HEARTBEAT_MS);
    this.timer.unref();
  }

  private async beat(capacity: number): Promise<void> {
    const seen = this.now().toISOString();
    const { changes } = await this.db.run('UPDATE queue_workers SET seen = ? WHERE identity = ?', [seen, this.me]);
    // removed as stale by another process while this one stalled: there again
    if (changes === 0) await this.register(capacity);
  }

  async unregister(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.db.run('DELETE FROM queue_workers WHERE identity = ?', [this.me]);
  }

  /** Whether a registered worker still runs: this host's by its process, another host's by its heartbeat. */
  private alive(identity: ProcessIdentity, seen: Date): boolean {
    const liveness = identityLiveness(identity);
    if (liveness !== 'unknown') return liveness === 'alive';
    return this.now().getTime() - seen.getTime() <= STALE_MS;
  }

  /** The pools that run now; rows of pools found gone are deleted on the way. */
  async live(): Promise<RegisteredWorker[]> {
    const rows = await this.db.all<Row>('SELECT identity, capacity, seen FROM queue_workers ORDER BY started');
    const live: RegisteredWorker[] = [];
    for (const row of rows) {
      const identity = parseProcessIdentity(String(row.identity));
      const seen = new Date(String(row.seen));
      if (identity && this.alive(identity, seen)) live.push({ identity, capacity: Number(row.capacity), seen });
      else
        await this.db.run('DELETE FROM queue_workers WHERE identity = ? AND seen = ?', [
          String(row.identity),
          String(row.seen),
        ]);
    }
    return live;
  }

  /** Jobs the live pools run at once, in all. */
  async capacity(): Promise<number> {
    return (await this.live()).reduce((sum, worker) => sum + worker.capacity, 0);
  }

  /**
   * Whether the worker a job names is gone: this host's when its process is; another host's when
   * it is not registered or its heartbeat is older than STALE_MS. An unreadable name: not gone.
   */
  async gone(worker: string | null): Promise<boolean> {
    if (worker === null) return true;
    const identity = parseProcessIdentity(worker);
    if (!identity) return false;
    const liveness = identityLiveness(identity);
    if (liveness !== 'unknown') return liveness === 'dead';
    const row = await this.db.get<Row>('SELECT seen FROM queue_workers WHERE identity = ?', [worker]);
    return !row || !this.alive(identity, new Date(String(row.seen)));
  }
}

/** What to tell someone whose job waits while no pool on the store runs jobs. */
export function noWorkerAdvice(scope: 'one-machine' | 'multi-machine'): string {
  return scope === 'one-machine'
    ? 'nothing runs the jobs of this store: start `gex serve --workers 1` (or more) on it — on a SQLite store only a gex serve runs jobs'
    : 'nothing runs the jobs of this store: start a `gex worker` (or a `gex serve --workers 1`) on it';
}
