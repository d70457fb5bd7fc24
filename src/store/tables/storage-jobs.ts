import { randomInt } from 'node:crypto';
import type { Database } from '../sql/database.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/**
 * Storage jobs of a project. Most table and bucket operations run at once, but Keboola's clients
 * ask for a job (`async=true`) and poll `GET /v2/storage/jobs/{id}` until it has finished; imports
 * and exports from File Storage run after their request answered (`waiting` → `processing` →
 * `success`/`error`). A job is kept in the database (so any server process on the store answers
 * the poll) for a day, then dropped. A job whose process died is ended `error` by the next server
 * that starts on the store (`endOrphans`).
 */

export type StorageJobStatus = 'waiting' | 'processing' | 'success' | 'error';

/** What an orphaned job's error says: its work ran in one transaction that never committed. */
export const ORPHANED_JOB_MESSAGE = 'The server stopped while the job ran; the table is unchanged. Run the job again.';

export interface StorageJob {
  readonly id: number;
  /** the job's JSON as the API sends it */
  readonly body: string;
}

/** How long a finished job can be read back. */
export const JOB_RETENTION_MS = 24 * 60 * 60 * 1000;

export class StorageJobs {
  constructor(
    private readonly db: Database,
    private readonly projectId: number,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** A new job id: random (not guessable from another project's), below 2^47 so every client reads it as an exact integer. */
  static newId(): number {
    return randomInt(1, 2 ** 47);
  }

  /** Saves a finished job and drops the project's jobs past their retention. */
  async record(
    id: number,
    body: string,
    status: StorageJobStatus = 'success',
    worker: string | null = null,
  ): Promise<void> {
    const now = this.now();
    await this.db.transaction(async (tx) => {
      await tx.run('DELETE FROM storage_jobs WHERE project_id = ? AND created < ?', [
        this.projectId,
        new Date(now.getTime() - JOB_RETENTION_MS).toISOString(),
      ]);
      await tx.run(
        'INSERT INTO storage_jobs (id, project_id, created, body, status, worker) VALUES (?, ?, ?, ?, ?, ?)',
        [id, this.projectId, now.toISOString(), body, status, worker],
      );
    });
  }

  /** A recorded job's new status and body (a finished job no longer has a worker). */
  async update(id: number, status: StorageJobStatus, body: string): Promise<void> {
    const finished = status === 'success' || status === 'error';
    await this.db.run(
      `UPDATE storage_jobs SET status = ?, body = ?${finished ? ', worker = NULL' : ''} WHERE project_id = ? AND id = ?`,
      [status, body, this.projectId, id],
    );
  }

  /** The project's job, or undefined (another project's job is not found either). */
  async get(id: number): Promise<StorageJob | undefined> {
    const row = await this.db.get<{ body: unknown }>('SELECT body FROM storage_jobs WHERE project_id = ? AND id = ?', [
      this.projectId,
      id,
    ]);
    return row && { id, body: String(row.body) };
  }
}

/**
 * Ends `error` every waiting or processing job (of any project) whose worker `isGone` says is no
 * longer running; returns their ids. Their work was one transaction, which its process's death
 * rolled back.
 */
export async function endOrphanedJobs(db: Database, isGone: OrphanCheck, now = new Date()): Promise<number[]> {
  const running = await db.all<{ id: unknown; worker: unknown; body: unknown }>(
    "SELECT id, worker, body FROM storage_jobs WHERE status IN ('waiting', 'processing')",
  );
  const ended: number[] = [];
  for (const row of running) {
    const id = Number(row.id);
    const checked = row.worker !== null;
    if (checked && !(await isGone.gone(String(row.worker), id))) continue;
    try {
      if (await endOrphan(db, id, String(row.body), now)) ended.push(id);
    } finally {
      if (checked) await isGone.release?.(id);
    }
  }
  return ended;
}

/**
 * Whether a waiting or processing job's worker is gone. `gone` may take the job's liveness lock
 * (PostgreSQL): `release` lets it go once the job's end is recorded.
 */
export interface OrphanCheck {
  gone(worker: string, jobId: number): boolean | Promise<boolean>;
  release?(jobId: number): Promise<void>;
}

/**
 * Liveness told by the database (PostgreSQL: a session advisory lock per job, held by its server
 * from before it is recorded until after its end is): a job whose lock anyone can take has no
 * server, on whichever machine that server ran.
 */
export interface StorageJobLiveness {
  /** taken before the job is recorded; false when it could not be (the job then relies on the host check) */
  hold(jobId: number): Promise<boolean>;
  release(jobId: number): Promise<void>;
  /**
   * The orphan check, on a session of its own: advisory locks are re-entrant within a session, so
   * the holder's own session would find its running jobs' locks free.
   */
  readonly orphans: OrphanCheck;
  close(): Promise<void>;
}

/** Records an orphaned job's end; false when it had ended meanwhile. */
async function endOrphan(db: Database, id: number, text: string, now: Date): Promise<boolean> {
  const body = JSON.parse(text) as Record<string, unknown>;
  body.status = 'error';
  body.endTime = now.toISOString();
  body.error = { code: KEBOOLA_ERRORS.jobsOrphaned.code, message: ORPHANED_JOB_MESSAGE };
  const changed = await db.run(
    "UPDATE storage_jobs SET status = 'error', body = ?, worker = NULL WHERE id = ? AND status IN ('waiting', 'processing')",
    [JSON.stringify(body), id],
  );
  return changed.changes > 0;
}
