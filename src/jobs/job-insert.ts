import { isFlowComponent } from '../store/flows/flow-model.js';
import type { SqlExecutor } from '../store/sql/database.js';
import type { JobType, NewJob } from './job-record.js';
import { inList, STANDARD } from './job-rows.js';
import { PENDING, RUNNING, type JobStatus } from './statuses.js';

/** The next job id (one sequence for every job of the store). */
export async function nextJobId(tx: SqlExecutor): Promise<number> {
  const seq = await tx.get<Record<string, unknown>>(
    'INSERT INTO sequences (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = sequences.value + 1 RETURNING value',
    ['queue_job'],
  );
  return Number(seq!.value);
}

/** Whether another run of the job's configuration is pending or running (so a new one waits behind it). */
export async function runAhead(tx: SqlExecutor, job: NewJob): Promise<boolean> {
  const ahead = await tx.get(
    `SELECT id FROM queue_jobs WHERE project_id = ? AND component_id = ? AND config_id = ? AND branch_id = ?
      AND ${STANDARD} AND status IN (${inList([...PENDING, ...RUNNING])}) LIMIT 1`,
    [job.projectId, job.componentId, job.configId, job.branchId],
  );
  return ahead !== undefined;
}

/** What a job row holds beyond its request: its place in the queue and, for a flow's jobs, in the tree. */
export interface JobPlacement {
  id: number;
  status: JobStatus;
  type?: JobType;
  /** a container starts as it is created */
  started?: string | null;
  configData?: unknown;
  retryLimit: number;
}

/** Inserts a job row (its run id: the parent's run id and its own id, as Keboola nests them). */
export async function insertJob(tx: SqlExecutor, job: NewJob, place: JobPlacement, now: Date): Promise<string> {
  // a flow's configuration is no run: a worker would read it as an extractor's
  if ((place.type ?? 'standard') === 'standard' && isFlowComponent(job.componentId)) {
    throw new Error(`A ${job.componentId} job is a flow: it is made by startFlow, never as a run`);
  }
  const runId = job.parentRunId ? `${job.parentRunId}.${place.id}` : String(place.id);
  await tx.run(
    `INSERT INTO queue_jobs (id, project_id, component_id, config_id, branch_id, status, desired_status, mode, run_id,
      parent_run_id, token_id, token_description, config_row_ids, tag, orchestration_job_id, created, result,
      retry_limit, timeout_seconds, type, orchestration_task_id, config_data, started)
      VALUES (?, ?, ?, ?, ?, ?, 'processing', ?, ?, ?, ?, ?, ?, ?, ?, ?, '[]', ?, ?, ?, ?, ?, ?)`,
    [
      place.id,
      job.projectId,
      job.componentId,
      job.configId,
      job.branchId,
      place.status,
      job.mode,
      runId,
      job.parentRunId,
      job.tokenId,
      job.tokenDescription,
      JSON.stringify(job.configRowIds),
      job.tag,
      job.orchestrationJobId,
      now.toISOString(),
      place.retryLimit,
      job.timeoutSeconds,
      place.type ?? 'standard',
      job.orchestrationTaskId ?? null,
      place.configData === undefined ? null : JSON.stringify(place.configData),
      place.started ?? null,
    ],
  );
  return runId;
}
