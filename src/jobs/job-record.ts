import type { JsonValue } from '../json/index.js';
import type { JobRunCounts } from './job-metrics.js';
import type { JobStatus } from './statuses.js';

/** The modes gex runs: `run`, and `forceRun` (a disabled configuration runs too). */
export type JobMode = 'run' | 'forceRun';

/** What a finished job reports (Keboola's `result`), built from the run's summary. */
export interface JobResult {
  message: string;
  configVersion: string | null;
  output: {
    tables: Array<{ id: string; name: string; displayName: string; columns: Array<{ name: string }> }>;
    /** loaded tables past the first MAX_OUTPUT_TABLES, not listed (absent when none) */
    tablesNotListed?: number;
  };
  error?: { type: 'user' | 'application'; message: string; code?: string };
  /**
   * what the run moved, when its process wrote a summary: stored with the result, served as the
   * job object's `metrics` (jobToWire), never in its `result`
   */
  counts?: JobRunCounts;
}

/**
 * Keboola's job types: a run (`standard`), or a container of a flow's tree that no worker runs —
 * the flow itself (`orchestrationContainer`) and each of its phases (`phaseContainer`).
 */
export type JobType = 'standard' | 'orchestrationContainer' | 'phaseContainer';

/** A queue job as stored: one run of one configuration (component, config, branch) of a project. */
export interface QueueJob {
  id: number;
  type: JobType;
  /** a flow's task job: the task's id in the flow (with orchestrationJobId, the flow's root job) */
  orchestrationTaskId: string | null;
  /** a phase job: its phase (`phaseId`, `tasks`, `dependsOn`, `orchestrationJobId`), as Keboola shows it */
  configData: unknown;
  projectId: number;
  projectName: string;
  componentId: string;
  configId: string;
  branchId: string;
  status: JobStatus;
  desiredStatus: 'processing' | 'terminating';
  mode: JobMode;
  runId: string;
  /** '' when none */
  parentRunId: string;
  tokenId: number;
  tokenDescription: string;
  /** empty: every enabled row */
  configRowIds: string[];
  tag: string | null;
  orchestrationJobId: string | null;
  /** ISO 8601 UTC (`toISOString`) */
  created: string;
  started: string | null;
  ended: string | null;
  durationSeconds: number | null;
  /** null until finished */
  result: JobResult | null;
  /** who runs it (host:pid) while it runs */
  worker: string | null;
  /** 1 for the first run, +1 per retry */
  attempt: number;
  /** retries it may be given after an application error or a lost worker (fixed when created) */
  retryLimit: number;
  /** the configuration's own limit (`runtime.process_timeout`), when it sets one; a worker's lower limit wins */
  timeoutSeconds: number | null;
}

/** What a create request decided, before the store gives it an id. */
export interface NewJob {
  projectId: number;
  componentId: string;
  configId: string;
  branchId: string;
  mode: JobMode;
  parentRunId: string;
  tokenId: number;
  tokenDescription: string;
  configRowIds: string[];
  tag: string | null;
  orchestrationJobId: string | null;
  /** the configuration's `runtime.process_timeout` (seconds), when set */
  timeoutSeconds: number | null;
  /** a flow (keboola.orchestrator, keboola.flow): its definition when the job was asked for, and the subset to run */
  flow?: { definition: JsonValue; onlyTaskIds: string[] | null };
  /** a flow's task job: the task's id */
  orchestrationTaskId?: string | null;
}

/** A line of a job's log. */
export interface JobEvent {
  jobId: number;
  seq: number;
  projectId: number;
  created: string;
  level: 'info' | 'warning' | 'error';
  message: string;
}

/** Where a log line stands among the lines of many jobs: its job, then its number in that job's log. */
export interface EventPosition {
  jobId: number;
  seq: number;
}

/** A job next to run for its configuration, and which attempt that run is (a dispatch's identity). */
export interface RunnableJob {
  id: number;
  attempt: number;
}
