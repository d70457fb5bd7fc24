import type { Database, SqlExecutor, SqlParam, TransactionExecutor } from '../store/sql/database.js';
import { anyElementOf, anyOf as anyOfValues, type ListCondition } from '../store/sql/value-list.js';
import { StoreError } from '../store/store-error.js';
import { storedIdentityLiveness } from '../common/process-liveness.js';
import type { EventPosition, JobEvent, JobResult, NewJob, QueueJob } from './job-record.js';
import { lostWorkerOutcome } from './job-result.js';
import { removeFoldersOfLostJob } from './job-folder.js';
import { SORT_COLUMNS, type JobSearch } from './job-search.js';
import { isFinished, PENDING, RUNNING, statusesLeadingTo, type JobStatus } from './statuses.js';
import { KEBOOLA_ERRORS } from '../common/keboola-errors.js';

type Row = Record<string, unknown>;

const SELECT = `SELECT j.*, p.name AS project_name FROM queue_jobs j JOIN projects p ON p.id = j.project_id`;
/** the same configuration as job `j` (a configuration is project, component, config, branch) */
const SAME_CONFIG = `o.project_id = j.project_id AND o.component_id = j.component_id AND o.config_id = j.config_id
  AND o.branch_id = j.branch_id`;
const inList = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

function toJob(row: Row): QueueJob {
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    id: Number(row.id),
    projectId: Number(row.project_id),
    projectName: String(row.project_name),
    componentId: String(row.component_id),
    configId: String(row.config_id),
    branchId: String(row.branch_id),
    status: row.status as JobStatus,
    desiredStatus: row.desired_status as QueueJob['desiredStatus'],
    mode: row.mode as QueueJob['mode'],
    runId: String(row.run_id),
    parentRunId: String(row.parent_run_id),
    tokenId: Number(row.token_id),
    tokenDescription: String(row.token_description),
    configRowIds: JSON.parse(String(row.config_row_ids)) as string[],
    tag: text(row.tag),
    orchestrationJobId: text(row.orchestration_job_id),
    created: String(row.created),
    started: text(row.started),
    ended: text(row.ended),
    durationSeconds: row.duration_seconds === null ? null : Number(row.duration_seconds),
    result: row.result === '[]' ? null : (JSON.parse(String(row.result)) as JobResult),
    worker: text(row.worker),
    attempt: Number(row.attempt ?? 1),
    retryLimit: Number(row.retry_limit ?? 0),
    timeoutSeconds:
      row.timeout_seconds === null || row.timeout_seconds === undefined ? null : Number(row.timeout_seconds),
  };
}

/** A LIKE pattern matching `text` literally (escape character `\`). */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

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

/** a configuration's jobs: the columns that name one */
type ConfigKey = [projectId: number, componentId: string, configId: string, branchId: string];
const CONFIG_WHERE = 'project_id = ? AND component_id = ? AND config_id = ? AND branch_id = ?';
const configKeyOf = (row: Row): ConfigKey => [
  Number(row.project_id),
  String(row.component_id),
  String(row.config_id),
  String(row.branch_id),
];

/**
 * Queue jobs in the store's database (SQLite or PostgreSQL, the same statements). Every change is
 * one transaction; claiming is serialised by the database (SQLite: BEGIN IMMEDIATE; PostgreSQL: a
 * transaction-scoped advisory lock), and a unique index allows one running job per configuration
 * whatever a claimer does.
 */
export class JobRepository {
  constructor(
    private readonly db: Database,
    private readonly options: JobRepositoryOptions = {},
  ) {}

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

  /** A job of the project (another project's is not found); any project's when `projectId` is null. */
  async get(projectId: number | null, id: number): Promise<QueueJob | undefined> {
    const row =
      projectId === null
        ? await this.db.get<Row>(`${SELECT} WHERE j.id = ?`, [id])
        : await this.db.get<Row>(`${SELECT} WHERE j.id = ? AND j.project_id = ?`, [id, projectId]);
    return row && toJob(row);
  }

  /** The project's jobs matching every filter given, sorted and paged. */
  async search(projectId: number, search: JobSearch): Promise<QueueJob[]> {
    if (search.none) return [];
    const where: string[] = ['j.project_id = ?'];
    const params: SqlParam[] = [projectId];
    // lists of any length (src/store/sql/value-list.ts)
    const add = (condition: ListCondition) => {
      where.push(condition.sql);
      params.push(...condition.params);
    };
    const anyOf = (column: string, values: readonly string[] | readonly number[] | undefined) => {
      if (values !== undefined) add(anyOfValues(this.db.dialect, column, values));
    };
    const bound = (column: string, op: '>=' | '<=', value: string | number | undefined) => {
      if (value === undefined) return;
      where.push(`${column} ${op} ?`);
      params.push(value);
    };
    anyOf('j.id', search.ids);
    anyOf('j.run_id', search.runIds);
    anyOf('j.branch_id', search.branchIds);
    anyOf('j.token_id', search.tokenIds);
    anyOf('j.token_description', search.tokenDescriptions);
    anyOf('j.component_id', search.componentIds);
    anyOf('j.config_id', search.configIds);
    anyOf('j.mode', search.modes);
    anyOf('j.status', search.statuses);
    // config_row_ids is a JSON array of strings
    if (search.configRowIds) add(anyElementOf(this.db.dialect, 'j.config_row_ids', search.configRowIds));
    if (search.parentRunId !== undefined) anyOf('j.parent_run_id', [search.parentRunId]);
    bound('j.created', '>=', search.createdFrom);
    bound('j.created', '<=', search.createdTo);
    bound('j.started', '>=', search.startedFrom);
    bound('j.started', '<=', search.startedTo);
    bound('j.ended', '>=', search.endedFrom);
    bound('j.ended', '<=', search.endedTo);
    bound('j.duration_seconds', '>=', search.durationFrom);
    bound('j.duration_seconds', '<=', search.durationTo);
    const order = search.sortOrder === 'asc' ? 'ASC' : 'DESC';
    const column = `j.${SORT_COLUMNS[search.sortBy]}`;
    // nulls last either way, and the id breaks ties so pages never overlap
    const sql = `${SELECT} WHERE ${where.join(' AND ')}
      ORDER BY CASE WHEN ${column} IS NULL THEN 1 ELSE 0 END, ${column} ${order}, j.id ${order} LIMIT ? OFFSET ?`;
    return (await this.db.all<Row>(sql, [...params, search.limit, search.offset])).map(toJob);
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
        await this.appendEventsIn(tx, { id, projectId: Number(row.project_id) }, [
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

  /** The statuses of these jobs now (a worker's check for kill requests sent to another server). */
  async statuses(ids: readonly number[]): Promise<Map<number, JobStatus>> {
    if (ids.length === 0) return new Map();
    const among = anyOfValues(this.db.dialect, 'id', ids);
    const rows = await this.db.all<Row>(`SELECT id, status FROM queue_jobs WHERE ${among.sql}`, among.params);
    return new Map(rows.map((r) => [Number(r.id), r.status as JobStatus]));
  }

  /** The running jobs and who runs them (to find those whose worker is gone). */
  async running(): Promise<Array<{ id: number; worker: string | null }>> {
    const rows = await this.db.all<Row>(
      `SELECT id, worker FROM queue_jobs WHERE status IN (${inList(RUNNING)}) ORDER BY id`,
    );
    return rows.map((r) => ({ id: Number(r.id), worker: r.worker === null ? null : String(r.worker) }));
  }

  /** Appends lines to a job's log, numbered after the ones it has. */
  appendEvents(
    job: { id: number; projectId: number },
    events: ReadonlyArray<Pick<JobEvent, 'created' | 'level' | 'message'>>,
  ): Promise<void> {
    if (events.length === 0) return Promise.resolve();
    return this.db.transaction((tx) => this.appendEventsIn(tx, job, events));
  }

  private async appendEventsIn(
    tx: TransactionExecutor,
    job: { id: number; projectId: number },
    events: ReadonlyArray<Pick<JobEvent, 'created' | 'level' | 'message'>>,
  ): Promise<void> {
    const last = await tx.get<Row>('SELECT MAX(seq) AS seq FROM queue_job_events WHERE job_id = ?', [job.id]);
    const first = last?.seq === null || last?.seq === undefined ? 1 : Number(last.seq) + 1;
    await tx.runEach(
      'INSERT INTO queue_job_events (job_id, seq, project_id, created, level, message) VALUES (?, ?, ?, ?, ?, ?)',
      events.map((e, i) => [job.id, first + i, job.projectId, e.created, e.level, e.message]),
    );
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
