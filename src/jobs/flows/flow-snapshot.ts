import type { FlowDefinition } from '../../store/flows/flow-model.js';
import type { JobStatus } from '../statuses.js';

/** One run of a task: the job that ran it (or runs it). */
export interface TaskAttempt {
  jobId: string;
  status: JobStatus;
  message: string | undefined;
  /** a failed job's error type */
  errorType?: 'user' | 'application';
  /** epoch ms; undefined until the job started */
  startedAt: number | undefined;
  endedAt: number | undefined;
}

/** What a flow run is, as the store holds it: its phases' and tasks' jobs so far. */
export interface FlowSnapshot {
  definition: FlowDefinition;
  /** a subset run (`onlyOrchestrationTaskIds` / `onlyFlowTaskIds`): only these tasks run */
  onlyTaskIds: ReadonlySet<string> | undefined;
  /** each phase's status; a phase not yet started is `waiting` (or `created`) */
  phases: ReadonlyMap<string, JobStatus>;
  /** when each phase that started did (epoch ms): a task's delay counts from its phase's start */
  phaseStartedAt: ReadonlyMap<string, number>;
  /** each task's attempts in order */
  attempts: ReadonlyMap<string, readonly TaskAttempt[]>;
  /** keboola.flow: the phases entered, in order */
  entered: readonly string[];
  /** the root was killed */
  killed: boolean;
  now: number;
}

/** What must happen next, in this order, in one transaction with the job ends it reacts to. */
export type FlowAction =
  | { type: 'startPhase'; phaseId: string }
  | { type: 'startTask'; taskId: string; notBefore: number }
  | { type: 'notify'; taskId: string }
  | { type: 'endPhase'; phaseId: string; status: 'success' | 'error' | 'warning' | 'cancelled' | 'terminated' }
  | { type: 'terminateTask'; jobId: string }
  | { type: 'endFlow'; status: 'success' | 'error' | 'warning' | 'terminated'; message: string }
  /** nothing to do until then (a delay or a retry's wait) */
  | { type: 'wakeAt'; at: number };
