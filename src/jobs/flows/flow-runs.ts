import { storedIdentityLiveness, thisProcessText } from '../../common/process-liveness.js';
import type { SqlExecutor } from '../../store/sql/database.js';
import { decodeJson, stringifyExact } from '../../json/index.js';
import { parseFlowDefinition } from '../../store/flows/flow-definition.js';
import { isFlowComponent, type FlowDefinition, type FlowTask } from '../../store/flows/flow-model.js';
import type { JobResult, NewJob, QueueJob, RunnableJob } from '../job-record.js';
import { insertJob, nextJobId } from '../job-insert.js';
import { SELECT, toJob, type Row } from '../job-rows.js';
import { isFinished, type JobStatus } from '../statuses.js';
import { flowResultDocument, type PhaseRun } from './flow-result.js';
import type { FlowAction, TaskAttempt } from './flow-snapshot.js';
import { nextFlowStep } from './flow-step.js';

/** What a flow's step may do to the queue inside the transaction it runs in (the job repository's). */
export interface QueueTx {
  tx: SqlExecutor;
  now: Date;
  /** a run queued: `created`, or `waiting` behind its configuration; runnable when created */
  createRun(job: NewJob): Promise<RunnableJob | undefined>;
  /** a task job killed: pending → cancelled (its configuration's next promoted), running → terminating */
  killRun(id: number): Promise<RunnableJob | undefined>;
  /** a container of the flow (a phase, the flow's job) ended in this transaction: the events it causes */
  jobEnded(id: number): Promise<void>;
}

/** A notification task due: sent after the commit, its outcome recorded by `notificationSent`. */
export interface DueNotification {
  rootJobId: number;
  taskId: string;
  channel: 'email' | 'webhook';
  recipients: string[];
  title: string;
  message: string;
  flow: { componentId: string; configId: string; projectId: number };
}

export interface FlowStepOutcome {
  runnable: RunnableJob[];
  notifications: DueNotification[];
}

/** A notification task's outcome; while `processing`, which process sends it (`by`) since when (`at`). */
interface NotificationRecord {
  status: JobStatus;
  at: string;
  message?: string;
  by?: string;
}

/**
 * A notification in flight is sent again when the process sending it is gone (this host's: at
 * once) or when it has been in flight this long (a sender on another host, or one that hangs):
 * longer than a delivery may take (FlowNotifications bounds it), shorter than a minute.
 */
export const NOTIFICATION_LEASE_MS = 45_000;
/** how often a flow with a notification in flight looks whether its sender is still there */
const IN_FLIGHT_CHECK_MS = 5000;

interface FlowRunRow {
  root: QueueJob;
  componentId: string;
  definition: FlowDefinition;
  onlyTaskIds: Set<string> | undefined;
  entered: string[];
  notified: Record<string, NotificationRecord>;
  killed: boolean;
  ended: boolean;
}

const ms = (iso: string | null): number | undefined => (iso === null ? undefined : Date.parse(iso));

/**
 * Creates a flow's job tree in the caller's transaction: the root (`orchestrationContainer`,
 * processing, with the id `rootId` reserved for it), one `phaseContainer` per phase (waiting), the
 * flow run's progress row; then its first step (the first phase's task jobs).
 */
export async function startFlow(
  q: QueueTx,
  job: NewJob & { flow: NonNullable<NewJob['flow']> },
  rootId: number,
): Promise<FlowStepOutcome> {
  if (!isFlowComponent(job.componentId)) throw new Error(`${job.componentId} is not a flow component`);
  const definition = parseFlowDefinition(job.componentId, job.flow.definition, { configId: job.configId });
  const { tx, now } = q;
  const rootRunId = await insertJob(
    tx,
    { ...job, parentRunId: '' },
    {
      id: rootId,
      status: 'processing',
      type: 'orchestrationContainer',
      started: now.toISOString(),
      configData: [],
      retryLimit: 0,
    },
    now,
  );
  for (const phase of definition.phases) {
    const id = await nextJobId(tx);
    const tasks = definition.tasks.filter((task) => task.phase === phase.id).map((task) => task.id);
    await insertJob(
      tx,
      { ...job, parentRunId: rootRunId, orchestrationJobId: String(rootId), configRowIds: [] },
      {
        id,
        status: 'waiting',
        type: 'phaseContainer',
        configData: { phaseId: phase.id, tasks, dependsOn: phase.dependsOn, orchestrationJobId: String(rootId) },
        retryLimit: 0,
      },
      now,
    );
  }
  await tx.run(
    `INSERT INTO flow_runs (root_job_id, project_id, component_id, definition, only_task_ids, entered, notified)
      VALUES (?, ?, ?, ?, ?, '[]', '{}')`,
    [
      rootId,
      job.projectId,
      job.componentId,
      stringifyExact(job.flow.definition),
      job.flow.onlyTaskIds ? JSON.stringify(job.flow.onlyTaskIds) : null,
    ],
  );
  return advanceFlow(q, rootId);
}

async function loadRun(tx: SqlExecutor, rootId: number): Promise<FlowRunRow | undefined> {
  const row = await tx.get<Row>('SELECT * FROM flow_runs WHERE root_job_id = ?', [rootId]);
  const rootRow = await tx.get<Row>(`${SELECT} WHERE j.id = ?`, [rootId]);
  if (!row || !rootRow) return undefined;
  const componentId = String(row.component_id);
  if (!isFlowComponent(componentId)) return undefined;
  const root = toJob(rootRow);
  return {
    root,
    componentId,
    definition: parseFlowDefinition(componentId, decodeJson(String(row.definition)), { configId: root.configId }),
    onlyTaskIds: row.only_task_ids === null ? undefined : new Set(JSON.parse(String(row.only_task_ids)) as string[]),
    entered: JSON.parse(String(row.entered)) as string[],
    notified: JSON.parse(String(row.notified)) as FlowRunRow['notified'],
    killed: Number(row.killed) === 1,
    ended: Number(row.ended) === 1,
  };
}

/** A flow run's jobs: its phase jobs by phase id, and each task's attempts (a notification's outcome as one). */
async function readTree(
  tx: SqlExecutor,
  rootId: number,
  notified: FlowRunRow['notified'],
): Promise<{ phaseJobs: Map<string, QueueJob>; attempts: Map<string, TaskAttempt[]> }> {
  const children = (
    await tx.all<Row>(`${SELECT} WHERE j.orchestration_job_id = ? ORDER BY j.id`, [String(rootId)])
  ).map(toJob);
  const phaseJobs = new Map<string, QueueJob>();
  const attempts = new Map<string, TaskAttempt[]>();
  for (const child of children) {
    if (child.type === 'phaseContainer') {
      const phaseId = (child.configData as { phaseId?: string } | null)?.phaseId;
      if (phaseId !== undefined) phaseJobs.set(phaseId, child);
    } else if (child.orchestrationTaskId !== null) {
      const list = attempts.get(child.orchestrationTaskId) ?? [];
      list.push({
        jobId: String(child.id),
        status: child.status,
        message: child.result?.error?.message ?? child.result?.message,
        errorType: child.result?.error?.type,
        startedAt: ms(child.started),
        endedAt: ms(child.ended),
      });
      attempts.set(child.orchestrationTaskId, list);
    }
  }
  for (const [taskId, sent] of Object.entries(notified)) {
    const at = ms(sent.at);
    attempts.set(taskId, [
      {
        jobId: '',
        status: sent.status,
        message: sent.message,
        startedAt: at,
        endedAt: isFinished(sent.status) ? at : undefined,
      },
    ]);
  }
  return { phaseJobs, attempts };
}

/**
 * Takes the next step of a flow run in the caller's transaction (the one that ended a task job,
 * killed the flow or found it due): reads its jobs, decides (nextFlowStep) and applies the decision.
 */
export async function advanceFlow(q: QueueTx, rootId: number): Promise<FlowStepOutcome> {
  const { tx, now } = q;
  const run = await loadRun(tx, rootId);
  const outcome: FlowStepOutcome = { runnable: [], notifications: [] };
  if (!run || run.ended) return outcome;
  forgetLostNotifications(run.notified, now);
  const { phaseJobs, attempts } = await readTree(tx, rootId, run.notified);
  const phases = new Map([...phaseJobs].map(([id, job]) => [id, job.status]));
  const actions = nextFlowStep({
    definition: run.definition,
    onlyTaskIds: run.onlyTaskIds,
    phases,
    phaseStartedAt: startTimes(phaseJobs),
    attempts,
    entered: run.entered,
    killed: run.killed,
    now: now.getTime(),
  });
  let wakeAt: number | undefined;
  const entered = [...run.entered];
  for (const action of actions) {
    const applied = await apply(q, run, action, phaseJobs, entered, outcome);
    if (applied !== undefined) wakeAt = Math.min(wakeAt ?? Infinity, applied);
  }
  if (Object.values(run.notified).some((sent) => sent.status === 'processing')) {
    wakeAt = Math.min(wakeAt ?? Infinity, now.getTime() + IN_FLIGHT_CHECK_MS);
  }
  await tx.run('UPDATE flow_runs SET entered = ?, notified = ?, wake_at = ? WHERE root_job_id = ?', [
    JSON.stringify(entered),
    JSON.stringify(run.notified),
    wakeAt === undefined ? null : new Date(wakeAt).toISOString(),
    rootId,
  ]);
  if (actions.some((a) => a.type === 'endFlow')) await writeRootResult(q, run, rootId, actions);
  return outcome;
}

function startTimes(phaseJobs: ReadonlyMap<string, QueueJob>): Map<string, number> {
  const started = new Map<string, number>();
  for (const [id, job] of phaseJobs) if (job.started !== null) started.set(id, Date.parse(job.started));
  return started;
}

/**
 * Drops the notifications in flight whose sender is gone or whose lease ran out, so that this
 * step sends them again (at most one extra delivery: the lost sender may have delivered before it
 * died).
 */
function forgetLostNotifications(notified: FlowRunRow['notified'], now: Date): void {
  for (const [taskId, sent] of Object.entries(notified)) {
    if (sent.status !== 'processing') continue;
    const expired = now.getTime() - Date.parse(sent.at) >= NOTIFICATION_LEASE_MS;
    if (expired || storedIdentityLiveness(sent.by) === 'dead') delete notified[taskId];
  }
}

/** Applies one action; a time to look again when it must wait. */
async function apply(
  q: QueueTx,
  run: FlowRunRow,
  action: FlowAction,
  phaseJobs: Map<string, QueueJob>,
  entered: string[],
  outcome: FlowStepOutcome,
): Promise<number | undefined> {
  const { tx, now } = q;
  const at = now.toISOString();
  switch (action.type) {
    case 'startPhase': {
      entered.push(action.phaseId);
      const phase = phaseJobs.get(action.phaseId);
      if (phase) {
        await tx.run(`UPDATE queue_jobs SET status = 'processing', started = ? WHERE id = ?`, [at, phase.id]);
        phase.status = 'processing';
      }
      return undefined;
    }
    case 'startTask': {
      if (action.notBefore > now.getTime()) return action.notBefore;
      const task = run.definition.tasks.find((t) => t.id === action.taskId);
      const phase = task && phaseJobs.get(task.phase);
      if (!task || task.action.type !== 'job' || !phase) return undefined;
      const runnable = await q.createRun(taskJob(run.root, phase, task));
      if (runnable) outcome.runnable.push(runnable);
      return undefined;
    }
    case 'notify': {
      const task = run.definition.tasks.find((t) => t.id === action.taskId);
      if (!task || task.action.type !== 'notification') return undefined;
      run.notified[task.id] = { status: 'processing', at, by: thisProcessText() };
      outcome.notifications.push({
        rootJobId: run.root.id,
        taskId: task.id,
        channel: task.action.channel,
        recipients: task.action.recipients,
        title: task.action.title,
        message: task.action.message,
        flow: { componentId: run.componentId, configId: run.root.configId, projectId: run.root.projectId },
      });
      return undefined;
    }
    case 'endPhase': {
      const phase = phaseJobs.get(action.phaseId);
      if (!phase || isFinished(phase.status)) return undefined;
      const started = phase.started ?? at;
      const duration = Math.max(0, Math.round((now.getTime() - Date.parse(started)) / 1000));
      await tx.run(`UPDATE queue_jobs SET status = ?, ended = ?, duration_seconds = ?, result = ? WHERE id = ?`, [
        action.status,
        at,
        phase.started === null ? null : duration,
        JSON.stringify(emptyResult(action.status === 'cancelled' ? 'The phase did not run.' : '')),
        phase.id,
      ]);
      phase.status = action.status;
      await q.jobEnded(phase.id);
      return undefined;
    }
    case 'terminateTask': {
      const runnable = await q.killRun(Number(action.jobId));
      if (runnable) outcome.runnable.push(runnable);
      return undefined;
    }
    case 'wakeAt':
      return action.at;
    case 'endFlow':
      return undefined;
  }
}

/** A task's job: an ordinary run of its configuration, a child of its phase's job. */
function taskJob(root: QueueJob, phase: QueueJob, task: FlowTask): NewJob {
  const action = task.action.type === 'job' ? task.action : undefined;
  return {
    projectId: root.projectId,
    componentId: action?.componentId ?? '',
    configId: action?.configId ?? '',
    branchId: root.branchId,
    mode: 'run',
    parentRunId: phase.runId,
    tokenId: root.tokenId,
    tokenDescription: root.tokenDescription,
    configRowIds: action?.configRowIds ?? [],
    tag: null,
    orchestrationJobId: String(root.id),
    orchestrationTaskId: task.id,
    timeoutSeconds: null,
  };
}

function emptyResult(message: string): JobResult {
  return { message, configVersion: null, output: { tables: [] } };
}

/** The root's end: its status, and Keboola's flow result document as its result. */
async function writeRootResult(q: QueueTx, run: FlowRunRow, rootId: number, actions: FlowAction[]): Promise<void> {
  const { tx, now } = q;
  const end = actions.find((a) => a.type === 'endFlow');
  if (end?.type !== 'endFlow') return;
  const { phaseJobs, attempts } = await readTree(tx, rootId, run.notified);
  const phases = new Map<string, PhaseRun>(
    [...phaseJobs].map(([id, job]) => [
      id,
      { jobId: String(job.id), status: job.status, startedAt: ms(job.started), endedAt: ms(job.ended) },
    ]),
  );
  const document = flowResultDocument(String(rootId), run.definition, phases, attempts, now.getTime());
  const message = end.message || (end.status === 'success' ? 'The flow finished.' : `The flow ended ${end.status}.`);
  const result = {
    ...emptyResult(message),
    ...document,
    ...(end.status === 'error' ? { error: { type: flowErrorType(attempts), message } } : {}),
  };
  const started = run.root.started ?? now.toISOString();
  const duration = Math.max(0, Math.round((now.getTime() - Date.parse(started)) / 1000));
  await tx.run(
    `UPDATE queue_jobs SET status = ?, ended = ?, duration_seconds = ?, result = ?, desired_status = desired_status WHERE id = ?`,
    [end.status, now.toISOString(), duration, JSON.stringify(result), rootId],
  );
  await tx.run('UPDATE flow_runs SET ended = 1, wake_at = NULL WHERE root_job_id = ?', [rootId]);
  await q.jobEnded(rootId);
}

/**
 * A failed flow's error type: `application` (a retry may help: a worker lost, a bug) when a task's
 * last attempt failed so, else `user` (its input must change first).
 */
function flowErrorType(attempts: ReadonlyMap<string, readonly TaskAttempt[]>): 'user' | 'application' {
  for (const list of attempts.values()) {
    const last = list.at(-1);
    if (last?.status === 'error' && last.errorType === 'application') return 'application';
  }
  return 'user';
}

/** A kill of a flow's root: marked, then its next step terminates the running task jobs and cancels the rest. */
export async function killFlow(q: QueueTx, rootId: number): Promise<FlowStepOutcome> {
  await q.tx.run(`UPDATE flow_runs SET killed = 1 WHERE root_job_id = ?`, [rootId]);
  await q.tx.run(`UPDATE queue_jobs SET desired_status = 'terminating' WHERE id = ?`, [rootId]);
  return advanceFlow(q, rootId);
}

/**
 * A notification task's outcome, recorded, then the flow's next step. The first outcome of a
 * notification counts: a sender that outlived its lease and reports after the one that sent it
 * again changes nothing.
 */
export async function notificationSent(
  q: QueueTx,
  rootId: number,
  taskId: string,
  failure: string | undefined,
): Promise<FlowStepOutcome> {
  const row = await q.tx.get<Row>('SELECT notified FROM flow_runs WHERE root_job_id = ?', [rootId]);
  if (!row) return { runnable: [], notifications: [] };
  const notified = JSON.parse(String(row.notified)) as FlowRunRow['notified'];
  if (notified[taskId]?.status !== 'processing') return { runnable: [], notifications: [] };
  notified[taskId] = {
    status: failure === undefined ? 'success' : 'error',
    at: q.now.toISOString(),
    ...(failure ? { message: failure } : {}),
  };
  await q.tx.run('UPDATE flow_runs SET notified = ? WHERE root_job_id = ?', [JSON.stringify(notified), rootId]);
  return advanceFlow(q, rootId);
}

/** The flow runs that must look again now (a delay or a retry's wait ran out). */
export async function dueFlowRuns(tx: SqlExecutor, now: Date, limit = 100): Promise<number[]> {
  const rows = await tx.all<Row>(
    'SELECT root_job_id FROM flow_runs WHERE ended = 0 AND wake_at IS NOT NULL AND wake_at <= ? ORDER BY wake_at LIMIT ?',
    [now.toISOString(), limit],
  );
  return rows.map((r) => Number(r.root_job_id));
}
