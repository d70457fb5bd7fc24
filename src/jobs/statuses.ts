/**
 * A queue job's statuses (Keboola's Job Queue) and the only moves between them. Every change of a
 * job's status in the store is checked against this table, so no code path invents a transition.
 */
export const JOB_STATUSES = [
  'created',
  'waiting',
  'processing',
  'success',
  'error',
  'warning',
  'terminating',
  'terminated',
  'cancelled',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** created → waiting → processing → success|error; kill → cancelled before start, terminating → terminated while running. */
export const TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  created: ['waiting', 'processing', 'cancelled'],
  waiting: ['processing', 'cancelled'],
  // error also when the worker stopped or the job timed out; created again for a retry (--retries)
  processing: ['success', 'error', 'warning', 'terminating', 'created'],
  // the process may finish on its own before the SIGTERM lands; a lost worker ends it as error
  terminating: ['terminated', 'error'],
  success: [],
  error: [],
  warning: [],
  terminated: [],
  cancelled: [],
};

/** not started yet: a worker may claim them */
export const PENDING: readonly JobStatus[] = ['created', 'waiting'];
/** a process runs (or is being stopped): at most one such job per configuration */
export const RUNNING: readonly JobStatus[] = ['processing', 'terminating'];

export function isFinished(status: JobStatus): boolean {
  return TRANSITIONS[status].length === 0;
}

export function isJobStatus(value: string): value is JobStatus {
  return (JOB_STATUSES as readonly string[]).includes(value);
}

/** The statuses from which a job may move to `to` (what an UPDATE's WHERE must require). */
export function statusesLeadingTo(to: JobStatus): JobStatus[] {
  return JOB_STATUSES.filter((from) => TRANSITIONS[from].includes(to));
}
