import { toPlain } from '../../json/index.js';
import type { FlowCondition } from '../../store/flows/flow-conditions.js';
import type { JobStatus } from '../statuses.js';
import type { TaskAttempt } from './flow-snapshot.js';

/** A task whose (last) job finished: what a condition may read of it. */
export interface FinishedTask {
  phase: string;
  attempt: TaskAttempt;
}

export interface ConditionContext {
  finished: ReadonlyMap<string, FinishedTask>;
  phaseStatus: ReadonlyMap<string, JobStatus>;
}

/** The task an aggregated operator's inner statement names `*`: each task of the phase in turn. */
const EACH_TASK = '*';

type Value = string | number | boolean | null | undefined | Value[];

/**
 * Whether a keboola.flow transition's condition holds. A condition sees only finished tasks: a
 * task not finished reads as nothing, and a comparison with nothing is false.
 */
export function conditionHolds(condition: FlowCondition, context: ConditionContext): boolean {
  return truthy(evaluate(condition, context, undefined));
}

function evaluate(condition: FlowCondition, context: ConditionContext, each: FinishedTask | undefined): Value {
  switch (condition.type) {
    case 'const':
      return toPlain(condition.value) as Value;
    case 'phase':
      return context.phaseStatus.get(condition.phase);
    case 'task': {
      const task = condition.task === EACH_TASK ? each : context.finished.get(condition.task);
      return task ? taskValue(task.attempt, condition.value) : undefined;
    }
    case 'operator': {
      const { operator, operands } = condition;
      const value = (i: number) => (operands[i] ? evaluate(operands[i], context, each) : undefined);
      switch (operator) {
        case 'AND':
          return operands.every((o) => truthy(evaluate(o, context, each)));
        case 'OR':
          return operands.some((o) => truthy(evaluate(o, context, each)));
        case 'EQUALS':
          return same(value(0), value(1));
        case 'NOT_EQUALS':
          return value(0) !== undefined && value(1) !== undefined && !same(value(0), value(1));
        case 'GREATER_THAN':
          return compare(value(0), value(1)) > 0;
        case 'LESS_THAN':
          return compare(value(0), value(1)) < 0;
        case 'INCLUDES':
          return includes(value(0), value(1));
        case 'CONTAINS':
          return contains(value(0), value(1));
        case 'ALL_TASKS_IN_PHASE':
        case 'ANY_TASKS_IN_PHASE':
        case 'ANY_TASKS_IN_ANY_PHASE': {
          const tasks = [...context.finished.values()].filter(
            (t) => operator === 'ANY_TASKS_IN_ANY_PHASE' || t.phase === condition.phase,
          );
          const holds = (t: FinishedTask) => operands.every((o) => truthy(evaluate(o, context, t)));
          return operator === 'ALL_TASKS_IN_PHASE' ? tasks.length > 0 && tasks.every(holds) : tasks.some(holds);
        }
      }
    }
  }
}

function taskValue(attempt: TaskAttempt, path: string): Value {
  switch (path) {
    case 'job.status':
      return attempt.status;
    case 'job.id':
      return attempt.jobId;
    case 'job.result.message':
      return attempt.message ?? '';
    case 'job.duration':
      return attempt.startedAt !== undefined && attempt.endedAt !== undefined
        ? Math.round((attempt.endedAt - attempt.startedAt) / 1000)
        : undefined;
    default:
      return undefined;
  }
}

function truthy(value: Value): boolean {
  return value === true;
}

function same(a: Value, b: Value): boolean {
  if (a === undefined || b === undefined) return false;
  if (Array.isArray(a) || Array.isArray(b)) return JSON.stringify(a) === JSON.stringify(b);
  if (typeof a === 'number' || typeof b === 'number') return Number(a) === Number(b);
  return String(a) === String(b);
}

function compare(a: Value, b: Value): number {
  const x = Number(a);
  const y = Number(b);
  if (a === undefined || b === undefined || a === null || b === null || Number.isNaN(x) || Number.isNaN(y)) return NaN;
  return x - y;
}

/** INCLUDES: the value is one of a list (either side may be the list). */
function includes(a: Value, b: Value): boolean {
  if (Array.isArray(b)) return b.some((item) => same(a, item));
  if (Array.isArray(a)) return a.some((item) => same(item, b));
  return false;
}

/** CONTAINS: a text contains another. */
function contains(a: Value, b: Value): boolean {
  if (a === undefined || b === undefined || a === null || b === null) return false;
  return String(a).includes(String(b));
}
