import type { Database, SqlExecutor } from '../store/sql/database.js';
import { StoreError } from '../store/store-error.js';
import { storedIdentityLiveness } from '../common/process-liveness.js';
import { appendJobEvents, JobEventLog } from './job-event-log.js';
import type { JobEvent, JobResult, NewJob, QueueJob, RunnableJob } from './job-record.js';
import { lostWorkerOutcome } from './job-result.js';
import { removeFoldersOfLostJob } from './job-folder.js';
import { JobReads } from './job-reads.js';
import {
  CONFIG_WHERE,
  configKeyOf,
  inList,
  SAME_CONFIG,
  SELECT,
  STANDARD,
  toJob,
  type ConfigKey,
  type Row,
} from './job-rows.js';
import { insertJob, nextJobId, runAhead } from './job-insert.js';
import {
  advanceFlow,
  dueFlowRuns,
  killFlow,
  notificationSent,
  startFlow,
  type DueNotification,
  type FlowStepOutcome,
  type QueueTx,
} from './flows/flow-runs.js';
import { isFinished, PENDING, RUNNING, statusesLeadingTo, type JobStatus } from './statuses.js';
import { KEBOOLA_ERRORS } from '../common/keboola-errors.js';
import { enqueueJobEnd } from './notifications/notification-outbox.js';

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
  /** Told, after the commit, of a flow's notification tasks that are due (the sender records each outcome). */
  onNotifications?: (due: DueNotification[]) => void;
  /** the job logs' marker (logMarker); default: the database's change marker */
  logMarker?: () => Promise<string | null>;
  /** Told, after the commit, that a job's end wrote notification events into the outbox (the sender looks at once). */
  onNotificationEvents?: () => void;
  /** Told, after the commit, of the jobs whose end it committed (the job metrics; a flow's phases are not told) */
  onJobsEnded?: (ends: readonly EndedJob[]) => void;
}

/** A job whose end was committed: its component, its final status, its run's time (none: it never started). */
export interface EndedJob {
  componentId: string;
  status: JobStatus;
  durationSeconds: number | null;
}

const CANCELLED: JobResult = {
  message: 'The job was cancelled before it started.',
  configVersion: null,
  output: { tables: [] },
};

const localWorkerGone = (job: QueueJob) => Promise.resolve(storedIdentityLiveness(job.worker) === 'dead');

export type { RunnableJob } from './job-record.js';

/**
 * Queue jobs in the store's database (SQLite or PostgreSQL, the same statements): their creation,
 * claims, kills and ends (reads: JobReads; logs: JobEventLog). Every change is
 * one transaction; claiming is serialised by the database (SQLite: BEGIN IMMEDIATE; PostgreSQL: a
 * transaction-scoped advisory lock), and a unique index allows one running job per configuration
 * whatever a claimer does.
 */
export class JobRepository extends JobReads {
  private readonly log: JobEventLog;
  /** a transaction of this repository wrote notification events: the sender is told after the commit */
  private eventsWritten = false;

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

  /** After a commit: the dispatch told of what became runnable, the sender of the notifications due, the metrics of the ends. */
  private async afterFlowStep(
    step: FlowStepOutcome | undefined,
    also: ReadonlyArray<RunnableJob | undefined> = [],
    ends: readonly EndedJob[] = [],
  ): Promise<void> {
    if (ends.length) this.options.onJobsEnded?.(ends);
    await this.runnable([...also, ...(step?.runnable ?? [])]);
    if (step?.notifications.length) this.options.onNotifications?.(step.notifications);
    if (this.eventsWritten) {
      this.eventsWritten = false;
      this.options.onNotificationEvents?.();
    }
  }

  /**
   * A job's end in `tx`, noted in `ends` for the metrics (told after the commit; a retried
   * transaction starts a new list). Its row is read only when someone listens.
   */
  private async noteEnd(tx: SqlExecutor, id: number, now: Date, ends: EndedJob[], row?: Row): Promise<void> {
    if (!this.options.onJobsEnded) return;
    const found =
      row ?? (await tx.get<Row>('SELECT component_id, status, started, type FROM queue_jobs WHERE id = ?', [id]));
    if (!found || found.type === 'phaseContainer') return;
    const started =
      found.started === null || found.started === undefined ? undefined : Date.parse(String(found.started));
    ends.push({
      componentId: String(found.component_id),
      status: found.status as JobStatus,
      durationSeconds:
        started === undefined || Number.isNaN(started) ? null : Math.max(0, (now.getTime() - started) / 1000),
    });
  }

  /** What a flow's step may do to the queue inside transaction `tx`; the jobs it ends are noted in `ends`. */
  private queueTx(tx: SqlExecutor, now: Date, ends: EndedJob[]): QueueTx {
    return {
      tx,
      now,
      jobEnded: async (id) => {
        if ((await enqueueJobEnd(tx, id, now)) > 0) this.eventsWritten = true;
        await this.noteEnd(tx, id, now, ends);
      },
      createRun: async (job) => {
        const id = await nextJobId(tx);
        const status = (await runAhead(tx, job)) ? 'waiting' : 'created';
        await insertJob(tx, job, { id, status, retryLimit: this.options.retryLimit ?? 0 }, now);
        return status === 'created' ? { id, attempt: 1 } : undefined;
      },
      killRun: async (id) => {
        const row = await tx.get<Row>(`${SELECT} WHERE j.id = ?`, [id]);
        if (!row) return undefined;
        const job = toJob(row);
        if (PENDING.includes(job.status)) {
          await tx.run(
            `UPDATE queue_jobs SET status = 'cancelled', desired_status = 'terminating', ended = ?, result = ? WHERE id = ?`,
            [now.toISOString(), JSON.stringify(CANCELLED), id],
          );
          await this.noteEnd(tx, id, now, ends, { ...row, status: 'cancelled', started: null });
          return job.status === 'created' ? this.promoteNext(tx, configKeyOf(row)) : undefined;
        }
        if (job.status === 'processing') {
          await tx.run(`UPDATE queue_jobs SET status = 'terminating', desired_status = 'terminating' WHERE id = ?`, [
            id,
          ]);
        }
        return undefined;
      },
    };
  }

  /** A flow's task job ended (or was cancelled) in `tx`: the flow's next step, in the same transaction. */
  private async taskEnded(
    tx: SqlExecutor,
    row: Row,
    now: Date,
    ends: EndedJob[],
  ): Promise<FlowStepOutcome | undefined> {
    if (row.orchestration_task_id === null || row.orchestration_task_id === undefined) return undefined;
    if (row.orchestration_job_id === null || row.type !== 'standard') return undefined;
    return advanceFlow(this.queueTx(tx, now, ends), Number(row.orchestration_job_id));
  }

  /** Records a notification task's outcome and takes its flow's next step. */
  async notificationSent(
    rootJobId: number,
    taskId: string,
    failure: string | undefined,
    now = new Date(),
  ): Promise<void> {
    let ends: EndedJob[] = [];
    const step = await this.db.transaction(async (tx) => {
      ends = [];
      await this.lockQueue(tx);
      return notificationSent(this.queueTx(tx, now, ends), rootJobId, taskId, failure);
    });
    await this.afterFlowStep(step, [], ends);
  }

  /** Takes the next step of every flow run whose wait (a delay, a retry) ran out; how many. */
  async advanceDueFlows(now = new Date()): Promise<number> {
    const due = await this.db.transaction((tx) => dueFlowRuns(tx, now));
    for (const rootId of due) {
      let ends: EndedJob[] = [];
      const step = await this.db.transaction(async (tx) => {
        ends = [];
        await this.lockQueue(tx);
        return advanceFlow(this.queueTx(tx, now, ends), rootId);
      });
      await this.afterFlowStep(step, [], ends);
    }
    return due.length;
  }

  /**
   * The oldest `waiting` job of the configuration becomes `created` (next to run) when nothing of
   * the configuration runs or is next already; its id, or undefined.
   */
  private async promoteNext(tx: SqlExecutor, key: ConfigKey): Promise<RunnableJob | undefined> {
    const busy = await tx.get(
      `SELECT id FROM queue_jobs WHERE ${CONFIG_WHERE} AND ${STANDARD} AND status IN ('created', ${inList(RUNNING)}) LIMIT 1`,
      key,
    );
    if (busy) return undefined;
    const next = await tx.get<Row>(
      `SELECT id, attempt FROM queue_jobs WHERE ${CONFIG_WHERE} AND ${STANDARD} AND status = 'waiting' ORDER BY id LIMIT 1`,
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

  /**
   * Stores a new job: `created`, or `waiting` when another job of its configuration is ahead of it;
   * a flow: its whole job tree and its first step (flow-runs.ts startFlow).
   */
  async create(job: NewJob, now = new Date()): Promise<QueueJob> {
    return (await this.createIf(job, () => Promise.resolve(true), now))!;
  }

  /**
   * Stores a new job (or a flow's tree) only when `claim`, run first in the same transaction, says
   * so (a schedule's tick row: whoever inserts it creates the tick's job, atomically); undefined
   * otherwise.
   */
  async createIf(
    job: NewJob,
    claim: (tx: SqlExecutor, jobId: () => Promise<number>) => Promise<boolean>,
    now = new Date(),
  ): Promise<QueueJob | undefined> {
    let ends: EndedJob[] = [];
    const created = await this.db.transaction(async (tx) => {
      ends = [];
      await this.lockQueue(tx);
      let reserved: number | undefined;
      const nextId = async () => (reserved ??= await nextJobId(tx));
      if (!(await claim(tx, nextId))) return undefined;
      const id = await nextId();
      let step: FlowStepOutcome | undefined;
      if (job.flow) step = await startFlow(this.queueTx(tx, now, ends), { ...job, flow: job.flow }, id);
      else {
        const status = (await runAhead(tx, job)) ? 'waiting' : 'created';
        await insertJob(tx, job, { id, status, retryLimit: this.options.retryLimit ?? 0 }, now);
      }
      return { job: toJob((await tx.get<Row>(`${SELECT} WHERE j.id = ?`, [id]))!), step };
    });
    if (!created) return undefined;
    await this.afterFlowStep(created.step, created.job.status === 'created' ? [created.job] : [], ends);
    return created.job;
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
        `SELECT j.id FROM queue_jobs j WHERE j.status IN (${inList(PENDING)}) AND j.${STANDARD}
          AND NOT EXISTS (SELECT 1 FROM queue_jobs o WHERE ${SAME_CONFIG} AND o.${STANDARD} AND o.status IN (${inList(RUNNING)}))
          AND NOT EXISTS (SELECT 1 FROM queue_jobs o WHERE ${SAME_CONFIG} AND o.${STANDARD} AND o.status IN (${inList(PENDING)}) AND o.id < j.id)
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
        `UPDATE queue_jobs SET status = 'waiting' WHERE status = 'created' AND ${STANDARD} AND project_id = ? AND component_id = ? AND config_id = ? AND branch_id = ?`,
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
          AND ${STANDARD} AND NOT EXISTS (SELECT 1 FROM queue_jobs o WHERE ${SAME_CONFIG.replaceAll('j.', 'queue_jobs.')}
            AND o.${STANDARD} AND o.status IN (${inList(RUNNING)}))`,
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
          AND j.${STANDARD}
          AND NOT EXISTS (SELECT 1 FROM queue_jobs o WHERE ${SAME_CONFIG} AND o.${STANDARD} AND o.status IN ('created', ${inList(RUNNING)}))
          LIMIT ?`,
        [limit],
      );
      for (const row of stuck) await this.promoteNext(tx, configKeyOf(row));
      const rows = await tx.all<Row>(
        `SELECT id, attempt FROM queue_jobs WHERE status = 'created' AND ${STANDARD} ORDER BY id LIMIT ?`,
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
    let flowStep: FlowStepOutcome | undefined;
    let ends: EndedJob[] = [];
    const killed = await this.db.transaction(async (tx) => {
      next = undefined;
      flowStep = undefined;
      ends = [];
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
      if (job.type === 'phaseContainer') {
        throw new StoreError(
          400,
          KEBOOLA_ERRORS.queueValidation.code,
          `Job ${id} is a phase of flow job ${job.orchestrationJobId ?? ''}: kill the flow's job, or a task's.`,
        );
      }
      if (job.type === 'orchestrationContainer') {
        flowStep = await killFlow(this.queueTx(tx, now, ends), id);
        return toJob((await tx.get<Row>(`${SELECT} WHERE j.id = ?`, [id]))!);
      }
      if (job.status === 'terminating') return job;
      if (PENDING.includes(job.status)) {
        await tx.run(
          `UPDATE queue_jobs SET status = 'cancelled', desired_status = 'terminating', ended = ?, result = ? WHERE id = ?`,
          [now.toISOString(), JSON.stringify(CANCELLED), id],
        );
        await this.noteEnd(tx, id, now, ends, { ...row, status: 'cancelled', started: null });
        if (job.status === 'created') next = await this.promoteNext(tx, configKeyOf(row));
        flowStep = await this.taskEnded(tx, row, now, ends);
      } else {
        await tx.run(`UPDATE queue_jobs SET status = 'terminating', desired_status = 'terminating' WHERE id = ?`, [id]);
      }
      return toJob((await tx.get<Row>(`${SELECT} WHERE j.id = ?`, [id]))!);
    });
    await this.afterFlowStep(flowStep, [next], ends);
    if (killed?.status !== 'terminating' || killed.type !== 'standard') return killed;
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
    const channel = await this.log.channel();
    let next: RunnableJob | undefined;
    let flowStep: FlowStepOutcome | undefined;
    let ends: EndedJob[] = [];
    const ended = await this.db.transaction(async (tx) => {
      next = undefined;
      flowStep = undefined;
      ends = [];
      await this.lockQueue(tx);
      const row = await tx.get<Row>(
        `SELECT status, started, attempt, retry_limit, project_id, component_id, config_id, branch_id, type,
          orchestration_job_id, orchestration_task_id FROM queue_jobs WHERE id = ?`,
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
        await appendJobEvents(tx, channel, { id, projectId: Number(row.project_id) }, [
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
      // the events its end causes, in the same transaction: written exactly when the end is
      if ((await enqueueJobEnd(tx, id, now)) > 0) this.eventsWritten = true;
      await this.noteEnd(tx, id, now, ends, { ...row, status, started: started.toISOString() });
      next = await this.promoteNext(tx, configKeyOf(row));
      flowStep = await this.taskEnded(tx, row, now, ends);
      return true;
    });
    await this.afterFlowStep(flowStep, [next], ends);
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
      await tx.run(`DELETE FROM flow_runs WHERE root_job_id IN (${marks})`, ids);
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

  /**
   * A value that differs after any line was appended to any job's log since it was read (by any
   * process); null when that cannot be known now. Read it before the log: equal to the one read
   * before the last read, nothing new is there. SQLite: the database's change marker; PostgreSQL:
   * the queue's JobLogMarker.
   */
  logMarker(): Promise<string | null> {
    return this.options.logMarker ? this.options.logMarker() : this.db.changeMarker();
  }

  /** The log of the project's jobs with this id or run id (JobEventLog.events). */
  events(projectId: number, options: Parameters<JobEventLog['events']>[1]): Promise<JobEvent[]> {
    return this.log.events(projectId, options);
  }
}
