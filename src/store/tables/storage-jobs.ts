import { randomInt } from 'node:crypto';
import type { Database } from '../sql/database.js';

/**
 * Storage jobs of a project: gex runs every table and bucket operation at once, but Keboola's
 * clients ask for a job (`async=true`) and poll `GET /v2/storage/jobs/{id}` until it has finished.
 * The finished job is kept in the database (so any server process on the store answers the poll)
 * for a day, then dropped.
 */

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
  async record(id: number, body: string): Promise<void> {
    const now = this.now();
    await this.db.transaction(async (tx) => {
      await tx.run('DELETE FROM storage_jobs WHERE project_id = ? AND created < ?', [
        this.projectId,
        new Date(now.getTime() - JOB_RETENTION_MS).toISOString(),
      ]);
      await tx.run('INSERT INTO storage_jobs (id, project_id, created, body) VALUES (?, ?, ?, ?)', [
        id,
        this.projectId,
        now.toISOString(),
        body,
      ]);
    });
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
