import type { JobResult, QueueJob } from './job-record.js';
import type { JobStatus } from './statuses.js';

/* The queue_jobs table as the job repository's statements read it: one place for its SQL pieces. */

export type Row = Record<string, unknown>;

export const SELECT = `SELECT j.*, p.name AS project_name FROM queue_jobs j JOIN projects p ON p.id = j.project_id`;
/** the same configuration as job `j` (a configuration is project, component, config, branch) */
export const SAME_CONFIG = `o.project_id = j.project_id AND o.component_id = j.component_id AND o.config_id = j.config_id
  AND o.branch_id = j.branch_id`;
/** a run, not a container of a flow's tree: what workers claim and the per-configuration rule counts */
export const STANDARD = "type = 'standard'";
export const inList = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

export function toJob(row: Row): QueueJob {
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    id: Number(row.id),
    type: (row.type ?? 'standard') as QueueJob['type'],
    orchestrationTaskId: text(row.orchestration_task_id),
    configData: row.config_data === null || row.config_data === undefined ? null : JSON.parse(String(row.config_data)),
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

/** a configuration's jobs: the columns that name one */
export type ConfigKey = [projectId: number, componentId: string, configId: string, branchId: string];
export const CONFIG_WHERE = 'project_id = ? AND component_id = ? AND config_id = ? AND branch_id = ?';
export const configKeyOf = (row: Row): ConfigKey => [
  Number(row.project_id),
  String(row.component_id),
  String(row.config_id),
  String(row.branch_id),
];
