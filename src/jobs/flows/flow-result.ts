import type { FlowDefinition } from '../../store/flows/flow-model.js';
import type { JobStatus } from '../statuses.js';
import type { TaskAttempt } from './flow-snapshot.js';

/** A phase job as the result document shows it. */
export interface PhaseRun {
  jobId: string;
  status: JobStatus;
  startedAt: number | undefined;
  endedAt: number | undefined;
}

/** Keboola's flow result document (`FlowResultDocument`), the root job's `result`. */
export interface FlowResultDocument {
  flow: { jobId: string };
  phases: Array<{
    id: string;
    name: string;
    jobId: string;
    status: JobStatus;
    startTime: string | null;
    duration: number | null;
  }>;
  tasks: Array<{
    id: string;
    name: string;
    phaseId: string;
    jobId: string | null;
    status: JobStatus | 'skipped';
    startTime: string | null;
    duration: number | null;
    results: Array<{
      jobId: string;
      status: JobStatus;
      startTime: string | null;
      duration: number | null;
      result: { message: string };
    }>;
  }>;
}

const iso = (at: number | undefined): string | null => (at === undefined ? null : new Date(at).toISOString());

/** Whole seconds from start to end (to now while it runs), or null before it started. */
function seconds(startedAt: number | undefined, endedAt: number | undefined, now: number): number | null {
  return startedAt === undefined ? null : Math.max(0, Math.round(((endedAt ?? now) - startedAt) / 1000));
}

/**
 * The root job's result: each phase and task with status, job, start and duration; a task's
 * `results` holds one entry per attempt (a retried task has several). A task that did not run in
 * this flow (disabled, outside a subset, or its phase never started) is `skipped`.
 */
export function flowResultDocument(
  rootJobId: string,
  definition: FlowDefinition,
  phases: ReadonlyMap<string, PhaseRun>,
  attempts: ReadonlyMap<string, readonly TaskAttempt[]>,
  now: number,
): FlowResultDocument {
  return {
    flow: { jobId: rootJobId },
    phases: definition.phases.map((phase) => {
      const run = phases.get(phase.id);
      return {
        id: phase.id,
        name: phase.name,
        jobId: run?.jobId ?? '',
        status: run?.status ?? 'waiting',
        startTime: iso(run?.startedAt),
        duration: seconds(run?.startedAt, run?.endedAt, now),
      };
    }),
    tasks: definition.tasks.map((task) => {
      const list = attempts.get(task.id) ?? [];
      const first = list[0];
      const last = list.at(-1);
      return {
        id: task.id,
        name: task.name,
        phaseId: task.phase,
        jobId: last?.jobId ?? null,
        status: last?.status ?? 'skipped',
        startTime: iso(first?.startedAt),
        duration: seconds(first?.startedAt, last?.endedAt, now),
        results: list.map((attempt) => ({
          jobId: attempt.jobId,
          status: attempt.status,
          startTime: iso(attempt.startedAt),
          duration: seconds(attempt.startedAt, attempt.endedAt, now),
          result: { message: attempt.message ?? '' },
        })),
      };
    }),
  };
}
