import type { Database, SqlExecutor } from '../store/sql/database.js';
import { StoreError } from '../store/store-error.js';
import { storedIdentityLiveness } from '../common/process-liveness.js';
import { appendJobEvents, JobEventLog } from './job-event-log.js';
import type { JobEvent, JobResult, NewJob, QueueJob } from './job-record.js';
import { lostWorkerOutcome } from './job-result.js';
import { removeFoldersOfLostJob } from './job-folder.js';
import { JobReads } from './job-reads.js';
import { CONFIG_WHERE, configKeyOf, inList, SAME_CONFIG, SELECT, toJob, type ConfigKey, type Row } from './job-rows.js';
import { isFinished, PENDING, RUNNING, statusesLeadingTo, type JobStatus } from './statuses.js';
import { KEBOOLA_ERRORS } from '../common/keboola-errors.js';

/** The outcome a worker reports for a job whose process ended, given the status the job has now. */
export type Outcome = (current: JobStatus) => { status: JobStatus; result: JobResult };

export interface JobRepositoryOptions {
  /** retries a job created here may be given after an application error or a lost worker (default 0) */
  retryLimit?: number;
  /**
   * Told, after the change is committed, of jobs that became `created` — next to run for their
   * configuration (a new job, the one after a finished or cancelled job, a retry): the dispatch.
   */
  onRunnable?: (jobs: RunnableJob[]) => Promise<void> | void;
  /**
   * Whether no live worker runs this `terminating` job (asked after a kill, so that a kill of a job
   * whose worker is gone ends it). Default: its worker is a process of this host that is gone.
   */
  workerGone?: (job: QueueJob) => Promise<boolean>;
}

const localWorkerGone = (job: QueueJob) => Promise.resolve(storedIdentityLiveness(job.worker) === 'dead');

/** A job next to run for its configuration, and which attempt that run is (a dispatch's identity). */
export interface RunnableJob {
  id: number;
  attempt: number;
}

/**
 * Queue jobs in the store's database (SQLite or PostgreSQL, the same statements): their creation,
 * claims, kills and ends (reads: JobReads; logs: JobEventLog). Every change is
 * one transaction; claiming is serialised by the database (SQLite: BEGIN IMMEDIATE; PostgreSQL: a
 * transaction-scoped advisory lock), and a unique index allows one running job per configuration
 * whatever a claimer does.
 */
export class JobRepository extends JobReads {
  private readonly log: JobEventLog;

  constructor(
    db: Database,
    private readonly options: JobRepositoryOptions = {},
  ) {
    super(db);
    this.log = new JobEventLog(db);
  }

  /** Tells the dispatch about jobs that became runnable (after the commit that made them so). */
  private async runnable(jobs: ReadonlyArray<RunnableJob | undefined>): Promise<void> {
    const found = jobs.filter((job): job is RunnableJob => job !== undefined);
    if (found.length) await this.options.onRunnable?.(found);
  }

  /**
   * The oldest `waiting` job of the configuration becomes `created` (next to run) when nothing of
   * the configuration runs or is next already; its id, or undefined.
   */
  private async promoteNext(tx: SqlExecutor, key: ConfigKey): Promise<RunnableJob | undefined> {
    const busy = await tx.get(
      `SELECT id FROM queue_jobs WHERE ${CONFIG_WHERE} AND status IN ('created', ${inList(RUNNING)}) LIMIT 1`,
      key,
    );
    if (busy) return undefined;
    const next = await tx.get<Row>(
      `SELECT id, attempt FROM queue_jobs WHERE ${CONFIG_WHERE} AND status = 'waiting' ORDER BY id LIMIT 1`,
      key,
    );
    if (!next) return undefined;
    await tx.run(`UPDATE queue_jobs SET status = 'created' WHERE id = ? AND status = 'waiting'`, [Number(next.id)]);
    return { id: Number(next.id), attempt: Number(next.attempt) };
  }

  /** Serialises the transactions that decide which job of a configuration runs next. */
  private async lockQueue(tx: SqlExecutor): Promise<void> {
    if (this.db.dialect.name === 'postgres') {
      await tx.get(`SELECT pg_advisory_xact_lock(hashtext('gex.queue:' || current_setting('search_path')))`);
    }
  }

  /** Stores a new job: `created`, or `waiting` when another job of its configuration is ahead of it. */
  async create(job: NewJob, now = new Date()): Promise<QueueJob> {
    return (await this.createIf(job, () => Promise.resolve(true), now))!;
  }

  /**
   * Stores a new job only when `claim`, run first in the same transaction, says so (a schedule's
   * tick row: whoever inserts it creates the tick's job, atomically); undefined otherwise.
   */
  async createIf(
    job: NewJob,
    claim: (tx: SqlExecutor, jobId: () => Promise<number>) => Promise<boolean>,
    now = new Date(),
  ): Promise<QueueJob | undefined> {
    const created = await this.db.transaction(async (tx) => {
      await this.lockQueue(tx);
      let reserved: number | undefined;
      const nextId = async () => (reserved ??= await this.nextJobId(tx));
      if (!(await claim(tx, nextId))) return undefined;
      const id = await nextId();
      const ahead = await tx.get(
        `SELECT id FROM queue_jobs WHERE project_id = ? AND component_id = ? AND config_id = ? AND branch_id = ?
          AND status IN (${inList([...PENDING, ...RUNNING])}) LIMIT 1`,
        [job.projectId, job.componentId, job.configId, job.branchId],
      );
      const runId = job.parentRunId ? `${job.parentRunId}.${id}` : String(id);
      await tx.run(
        `INSERT INTO queue_jobs (id, project_id, component_id, config_id, branch_id, status, desired_status, mode, run_id,
          parent_run_id, token_id, token_description, config_row_ids, tag, orchestration_job_id, created, result,
          retry_limit, timeout_seconds)
          VALUES (?, ?, ?, ?, ?, ?, 'processing', ?, ?, ?, ?, ?, ?, ?, ?, ?, '[]', ?, ?)`,
        [
          id,
          job.projectId,
          job.componentId,
          job.configId,
          job.branchId,
          ahead ? 'waiting' : 'created',
          job.mode,
          runId,
          job.parentRunId,
          job.tokenId,
          job.tokenDescription,
          JSON.stringify(job.configRowIds),
          job.tag,
          job.orchestrationJobId,
          now.toISOString(),
          this.options.retryLimit ?? 0,
          job.timeoutSeconds,
        ],
      );
      return toJob((await tx.get<Row>(`${SELECT} WHERE j.id = ?`, [id]))!);
    });
    if (created?.status === 'created') await this.runnable([created]);
    return created;
  }

  private async nextJobId(tx: SqlExecutor): Promise<number> {
    const seq = await tx.get<Row>(
      'INSERT INTO sequences (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = sequences.value + 1 RETURNING value',
      ['queue_job'],
    );
    return Number(seq!.value);
  }

  /**
   * Marks the oldest runnable job `processing` for `worker` and returns it; undefined when none
   * can run. Runnable: pending, no job of its configuration running, and no older pending job of
   * its configuration (they run in order). Jobs queued behind it become `waiting`.
   */
  claimNext(worker: string, now = new Date()): Promise<QueueJob | undefined> {
    return this.db.transaction(async (tx) => {
      await this.lockQueue(tx);
      const next = await tx.get<Row>(
        `SELECT j.id FROM queue_jobs j WHERE j.status IN (${inList(PENDING)})
          AND NOT EXISTS (SELECT 1 FROM queue_jobs o WHERE ${SAME_CONFIG} AND o.status IN (${inList(RUNNING)}))
          AND NOT EXISTS (SELECT 1 FROM queue_jobs o WHERE ${SAME_CONFIG} AND o.status IN (${inList(PENDING)}) AND o.id < j.id)
          ORDER BY j.id LIMIT 1`,
      );
      if (!next) return undefined;
      const id = Number(next.id);
      await tx.run(
        `UPDATE queue_jobs SET status = 'processing', started = ?, worker = ? WHERE id = ? AND status IN (${inList(statusesLeadingTo('processing'))})`,
        [now.toISOString(), worker, id],
      );
      const job = toJob((await tx.get<Row>(`${SELECT} WHERE j.id = ?`, [id]))!);
      await tx.run(
        `UPDATE queue_jobs SET status = 'waiting' WHERE status = 'created' AND project_id = ? AND component_id = ? AND config_id = ? AND branch_id = ?`,
        [job.projectId, job.componentId, job.configId, job.branchId],
      );
      return job;
    });
  }

  /**
   * Marks job `id` `processing` for `worker` when it is next to run (`created`) and nothing of its
   * configuration runs; undefined otherwise (cancelled meanwhile, already run, or a duplicate
   * delivery). How a worker fed by a dispatch queue takes the job it was handed.
   */
  claim(id: number, worker: string, now = new Date()): Promise<QueueJob | undefined> {
    // one statement decides (only a `created` job, nothing of its configuration running; the unique index
    // backs it): no queue lock needed, which keeps a dispatched job's start short
    return this.db.transaction(async (tx) => {
      const claimed = await tx.run(
        `UPDATE queue_jobs SET status = 'processing', started = ?, worker = ? WHERE id = ? AND status = 'created'
          AND NOT EXISTS (SELECT 1 FROM queue_jobs o WHERE ${SAME_CONFIG.replaceAll('j.', 'queue_jobs.')}
            AND o.status IN (${inList(RUNNING)}))`,
        [now.toISOString(), worker, id],
      );
      if (claimed.changes === 0) return undefined;
      return toJob((await tx.get<Row>(`${SELECT} WHERE j.id = ?`, [id]))!);
    });
  }

  /**
   * What a dispatch must hand out, found again (after a crash between a commit and its dispatch,
   * or jobs queued before the dispatch existed): every configuration with waiting jobs and none
   * next or running gets its next one; the ids of all jobs next to run, oldest first.
   */
  async reconcile(limit = 1000): Promise<RunnableJob[]> {
    return this.db.transaction(async (tx) => {
      await this.lockQueue(tx);
      const stuck = await tx.all<Row>(
        `SELECT DISTINCT project_id, component_id, config_id, branch_id FROM queue_jobs j WHERE j.status = 'waiting'
          AND NOT EXISTS (SELECT 1 FROM queue_jobs o WHERE ${SAME_CONFIG} AND o.status IN ('created', ${inList(RUNNING)}))
          LIMIT ?`,
        [limit],
      );
      for (const row of stuck) await this.promoteNext(tx, configKeyOf(row));
      const rows = await tx.all<Row>(
        `SELECT id, attempt FROM queue_jobs WHERE status = 'created' ORDER BY id LIMIT ?`,
        [limit],
      );
      return rows.map((r) => ({ id: Number(r.id), attempt: Number(r.attempt) }));
    });
  }

  /**
   * Kills a job of the project: a pending one is `cancelled` at once; a running one becomes
   * `terminating` (its worker stops the process and ends it `terminated`) — or `terminated` at
   * once when no live worker runs it (its worker died). A finished job: 400.
   */
  async kill(projectId: number, id: number, now = new Date()): Promise<QueueJob | undefined> {
    let next: RunnableJob | undefined;
    const killed = await this.db.transaction(async (tx) => {
      next = undefined;
      await this.lockQueue(tx);
      const row = await tx.get<Row>(`${SELECT} WHERE j.id = ? AND j.project_id = ?`, [id, projectId]);
      if (!row) return undefined;
      const job = toJob(row);
      if (isFinished(job.status)) {
        throw new StoreError(
          400,
          KEBOOLA_ERRORS.queueJobFinished.code,
          `Job ${id} is already finished (${job.status}): it cannot be killed.`,
        );
      }
      if (job.status === 'terminating') return job;
      if (PENDING.includes(job.status)) {
        const result: JobResult = {
          message: 'The job was cancelled before it started.',
          configVersion: null,
          output: { tables: [] },
        };
        await tx.run(
          `UPDATE queue_jobs SET status = 'cancelled', desired_status = 'terminating', ended = ?, result = ? WHERE id = ?`,
          [now.toISOString(), JSON.stringify(result), id],
        );
        if (job.status === 'created') next = await this.promoteNext(tx, configKeyOf(row));
      } else {
        await tx.run(`UPDATE queue_jobs SET status = 'terminating', desired_status = 'terminating' WHERE id = ?`, [id]);
      }
      return toJob((await tx.get<Row>(`${SELECT} WHERE j.id = ?`, [id]))!);
    });
    await this.runnable([next]);
    if (killed?.status !== 'terminating') return killed;
    // nothing would ever stop it: its worker is gone
    if (!(await (this.options.workerGone ?? localWorkerGone)(killed))) return killed;
    await this.finish(id, lostWorkerOutcome, now);
    // its folder, where it is on this machine (the worker could not remove it)
    await removeFoldersOfLostJob(id, killed.worker).catch(() => undefined);
    return this.get(projectId, id);
  }

  /**
   * Ends a running job with the outcome its worker reports; false when it was no longer running.
   * An application error (a lost worker is one) of a job with retries left sends it back to
   * `created` for another attempt instead, said in its log; a user error, a timeout or a kill never
   * does. The configuration's next job becomes runnable when this one is done.
   */
  async finish(id: number, outcome: Outcome, now = new Date()): Promise<boolean> {
    let next: RunnableJob | undefined;
    const ended = await this.db.transaction(async (tx) => {
      next = undefined;
      await this.lockQueue(tx);
      const row = await tx.get<Row>(
        'SELECT status, started, attempt, retry_limit, project_id, component_id, config_id, branch_id FROM queue_jobs WHERE id = ?',
        [id],
      );
      const current = row?.status as JobStatus | undefined;
      if (!row || !current || !RUNNING.includes(current)) return false;
      const { status, result } = outcome(current);
      if (!statusesLeadingTo(status).includes(current))
        throw new Error(`A job cannot move from ${current} to ${status}`);
      const attempt = Number(row.attempt);
      if (
        current === 'processing' &&
        status === 'error' &&
        result.error?.type === 'application' &&
        attempt <= Number(row.retry_limit)
      ) {
        await tx.run(
          `UPDATE queue_jobs SET status = 'created', attempt = attempt + 1, started = NULL, worker = NULL WHERE id = ?`,
          [id],
        );
        await appendJobEvents(tx, { id, projectId: Number(row.project_id) }, [
          {
            created: now.toISOString(),
            level: 'warning',
            message: `Attempt ${attempt} ended with an application error (${result.error.message}): retrying, attempt ${attempt + 1} of ${Number(row.retry_limit) + 1}`,
          },
        ]);
        next = { id, attempt: attempt + 1 };
        return true;
      }
      const started = row.started === null ? now : new Date(String(row.started));
      const duration = Math.max(0, Math.round((now.getTime() - started.getTime()) / 1000));
      await tx.run(
        'UPDATE queue_jobs SET status = ?, ended = ?, duration_seconds = ?, result = ?, worker = NULL WHERE id = ?',
        [status, now.toISOString(), duration, JSON.stringify(result), id],
      );
      next = await this.promoteNext(tx, configKeyOf(row));
      return true;
    });
    await this.runnable([next]);
    return ended;
  }

  /**
   * Deletes finished jobs (and their logs) that ended before `before`, at most `batch` at a time;
   * how many were deleted.
   */
  async deleteFinishedBefore(before: Date, batch = 1000): Promise<number> {
    return this.db.transaction(async (tx) => {
      const rows = await tx.all<Row>(
        `SELECT id FROM queue_jobs WHERE ended IS NOT NULL AND ended < ? ORDER BY ended LIMIT ?`,
        [before.toISOString(), batch],
      );
      if (rows.length === 0) return 0;
      const ids = rows.map((r) => Number(r.id));
      const marks = ids.map(() => '?').join(', ');
      await tx.run(`DELETE FROM queue_job_events WHERE job_id IN (${marks})`, ids);
      await tx.run(`DELETE FROM queue_jobs WHERE id IN (${marks})`, ids);
      return ids.length;
    });
  }

  /** Appends lines to a job's log, numbered after the ones it has. */
  appendEvents(
    job: { id: number; projectId: number },
    events: ReadonlyArray<Pick<JobEvent, 'created' | 'level' | 'message'>>,
  ): Promise<void> {
    return this.log.appendEvents(job, events);
  }

  /** The log of the project's jobs with this id or run id (JobEventLog.events). */
  events(projectId: number, options: Parameters<JobEventLog['events']>[1]): Promise<JobEvent[]> {
    return this.log.events(projectId, options);
  }
}
