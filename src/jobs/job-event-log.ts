import type { Database, SqlParam, TransactionExecutor } from '../store/sql/database.js';
import type { EventPosition, JobEvent } from './job-record.js';
import type { Row } from './job-rows.js';
import { jobLogChannel } from './job-log-marker.js';

/** A LIKE pattern matching `text` literally (escape character `\`). */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * Appends lines to a job's log in `tx`, numbered after the ones it has. PostgreSQL: also notifies
 * `channel` (jobLogChannel), delivered once `tx` commits — what the live log's marker counts.
 */
export async function appendJobEvents(
  tx: TransactionExecutor,
  channel: string | null,
  job: { id: number; projectId: number },
  events: ReadonlyArray<Pick<JobEvent, 'created' | 'level' | 'message'>>,
): Promise<void> {
  const last = await tx.get<Row>('SELECT MAX(seq) AS seq FROM queue_job_events WHERE job_id = ?', [job.id]);
  const first = last?.seq === null || last?.seq === undefined ? 1 : Number(last.seq) + 1;
  await tx.runEach(
    'INSERT INTO queue_job_events (job_id, seq, project_id, created, level, message) VALUES (?, ?, ?, ?, ?, ?)',
    events.map((e, i) => [job.id, first + i, job.projectId, e.created, e.level, e.message]),
  );
  if (channel !== null) await tx.run(`SELECT pg_notify(?, '')`, [channel]);
}

/** The jobs' logs (queue_job_events): lines appended by workers, read back bounded. */
export class JobEventLog {
  private notifyChannel: Promise<string | null> | undefined;

  constructor(private readonly db: Database) {}

  /** The channel appends notify (appendJobEvents); null on SQLite. */
  channel(): Promise<string | null> {
    this.notifyChannel ??= jobLogChannel(this.db).catch((error: unknown) => {
      this.notifyChannel = undefined; // asked again next time (the database may be back)
      throw error;
    });
    return this.notifyChannel;
  }

  /** Appends lines to a job's log, numbered after the ones it has. */
  async appendEvents(
    job: { id: number; projectId: number },
    events: ReadonlyArray<Pick<JobEvent, 'created' | 'level' | 'message'>>,
  ): Promise<void> {
    if (events.length === 0) return;
    const channel = await this.channel();
    await this.db.transaction((tx) => appendJobEvents(tx, channel, job, events));
  }

  /**
   * The log of the project's jobs with this id or run id (or of their child runs): oldest first, or
   * with `newestFirst` the newest `limit` lines, ordered and cut in SQL so that memory stays bounded
   * however long the log. A line's position is (job id, seq); `after` and `atMost` bound it.
   */
  async events(
    projectId: number,
    options: {
      jobId?: number;
      runId?: string;
      sinceSeq?: number;
      after?: EventPosition;
      atMost?: EventPosition;
      newestFirst?: boolean;
      limit: number;
    },
  ): Promise<JobEvent[]> {
    const where = ['e.project_id = ?'];
    const params: SqlParam[] = [projectId];
    if (options.jobId !== undefined) {
      where.push('e.job_id = ?');
      params.push(options.jobId);
    }
    if (options.runId !== undefined) {
      // the run's jobs first (a job is one row, its log many): the database then reads only their lines
      where.push(`e.job_id IN (SELECT j.id FROM queue_jobs j WHERE j.project_id = ?
        AND (j.run_id = ? OR j.run_id LIKE ? ESCAPE '\\'))`);
      params.push(projectId, options.runId, `${likeLiteral(options.runId)}.%`);
    }
    if (options.sinceSeq !== undefined) {
      where.push('e.seq > ?');
      params.push(options.sinceSeq);
    }
    if (options.after) {
      where.push('(e.job_id > ? OR (e.job_id = ? AND e.seq > ?))');
      params.push(options.after.jobId, options.after.jobId, options.after.seq);
    }
    if (options.atMost) {
      where.push('(e.job_id < ? OR (e.job_id = ? AND e.seq <= ?))');
      params.push(options.atMost.jobId, options.atMost.jobId, options.atMost.seq);
    }
    const order = options.newestFirst ? 'DESC' : 'ASC';
    const rows = await this.db.all<Row>(
      `SELECT e.* FROM queue_job_events e WHERE ${where.join(' AND ')}
        ORDER BY e.job_id ${order}, e.seq ${order} LIMIT ?`,
      [...params, options.limit],
    );
    return rows.map((r) => ({
      jobId: Number(r.job_id),
      seq: Number(r.seq),
      projectId: Number(r.project_id),
      created: String(r.created),
      level: r.level as JobEvent['level'],
      message: String(r.message),
    }));
  }
}
