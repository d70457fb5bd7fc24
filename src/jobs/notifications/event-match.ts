import type { QueueJob } from '../job-record.js';
import type { SubscriptionEvent, SubscriptionFilter } from './subscription-input.js';

/** What a subscription's filters are compared with: the job's facts (and a long run's overrun). */
export interface EventFacts {
  'job.component.id': string;
  'job.configuration.id': string;
  'job.id': string;
  'branch.id': string;
  /** a phase event's phase id; a task job's phase is not known here (absent: a filter on it does not match) */
  'phase.id'?: string;
  /** job-processing-long only: how far past its usual duration the job is, as a fraction (0.75: 75 % longer) */
  durationOvertimePercentage?: number;
}

const END_EVENTS: Partial<Record<QueueJob['status'], 'failed' | 'succeeded' | 'succeeded-with-warning'>> = {
  error: 'failed',
  success: 'succeeded',
  warning: 'succeeded-with-warning',
};

/**
 * The event a job's end causes: `job-…` for a run or a flow's job, `phase-job-…` for a flow's
 * phase; none for a kill (terminated, cancelled), which someone asked for.
 */
export function endEvent(job: Pick<QueueJob, 'status' | 'type'>): SubscriptionEvent | undefined {
  const end = END_EVENTS[job.status];
  if (!end) return undefined;
  return job.type === 'phaseContainer' ? `phase-job-${end}` : `job-${end}`;
}

/** The long-run event of a job (a phase's for a phase container). */
export function longRunEvent(job: Pick<QueueJob, 'type'>): SubscriptionEvent {
  return job.type === 'phaseContainer' ? 'phase-job-processing-long' : 'job-processing-long';
}

/** A phase container's phase id (its configData), for phase events. */
export function phaseIdOf(job: Pick<QueueJob, 'type' | 'configData'>): string | undefined {
  if (job.type !== 'phaseContainer') return undefined;
  const data = job.configData as { phaseId?: unknown } | null;
  return data && (typeof data.phaseId === 'string' || typeof data.phaseId === 'number')
    ? String(data.phaseId)
    : undefined;
}

export function factsOf(job: QueueJob, overtime?: number): EventFacts {
  const phase = phaseIdOf(job);
  return {
    'job.component.id': job.componentId,
    'job.configuration.id': job.configId,
    'job.id': String(job.id),
    'branch.id': job.branchId,
    ...(phase === undefined ? {} : { 'phase.id': phase }),
    ...(overtime === undefined ? {} : { durationOvertimePercentage: overtime }),
  };
}

function holds(filter: SubscriptionFilter, facts: EventFacts): boolean {
  const actual = facts[filter.field];
  if (actual === undefined) return false;
  if (filter.operator === '==') {
    // ids are strings on the wire and numbers in some clients' filters: compare as text
    return typeof actual === 'number' && typeof filter.value === 'number'
      ? actual === filter.value
      : String(actual) === String(filter.value);
  }
  const a = Number(actual);
  const b = Number(filter.value);
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  switch (filter.operator) {
    case '<':
      return a < b;
    case '>':
      return a > b;
    case '<=':
      return a <= b;
    case '>=':
      return a >= b;
  }
}

/** Whether every filter holds for the facts (no filters: always). */
export function filtersMatch(filters: readonly SubscriptionFilter[], facts: EventFacts): boolean {
  return filters.every((filter) => holds(filter, facts));
}
