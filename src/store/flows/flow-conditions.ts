import { isJsonObject, isList, type JsonValue } from '../../json/index.js';
import { describeFlowValue, type FlowProblems } from './flow-problems.js';

/** Operators that compare or combine their operands. */
export const VALUE_OPERATORS = [
  'AND',
  'OR',
  'EQUALS',
  'NOT_EQUALS',
  'GREATER_THAN',
  'LESS_THAN',
  'INCLUDES',
  'CONTAINS',
] as const;
/** Operators that apply their operand to the tasks of a phase (`phase`), or of every phase. */
export const PHASE_OPERATORS = ['ALL_TASKS_IN_PHASE', 'ANY_TASKS_IN_PHASE', 'ANY_TASKS_IN_ANY_PHASE'] as const;
export type ConditionOperator = (typeof VALUE_OPERATORS)[number] | (typeof PHASE_OPERATORS)[number];

/** What a condition reads of a finished task's job (Keboola's `job.*` paths). */
export const TASK_VALUES = [
  'job.status',
  'job.duration',
  'job.result.message',
  'job.id',
  'job.componentId',
  'job.configId',
] as const;

/** A keboola.flow transition's condition, checked. */
export type FlowCondition =
  | { type: 'operator'; operator: ConditionOperator; phase: string | undefined; operands: FlowCondition[] }
  | { type: 'const'; value: JsonValue }
  | { type: 'task'; task: string; value: (typeof TASK_VALUES)[number] }
  | { type: 'phase'; phase: string; value: 'status' };

const MAX_DEPTH = 10;
const MAX_OPERANDS = 50;

/** Reads a condition; unknown operators, operand types and values are problems at their path. */
export function parseCondition(
  value: JsonValue,
  path: string,
  problems: FlowProblems,
  depth = 0,
): FlowCondition | undefined {
  if (depth >= MAX_DEPTH) {
    problems.add(path, `conditions nest at most ${MAX_DEPTH} deep`);
    return undefined;
  }
  if (!isJsonObject(value)) {
    problems.add(path, `a condition is an object with "type", got ${describeFlowValue(value)}`);
    return undefined;
  }
  const type = value.get('type');
  switch (type) {
    case 'operator':
      return readOperator(value, path, problems, depth);
    case 'const':
    case 'constant': {
      const constant = value.get('value');
      if (constant === undefined) problems.add(`${path}.value`, 'required: the constant');
      return constant === undefined ? undefined : { type: 'const', value: constant };
    }
    case 'task': {
      const task = idOf(value.get('task'), `${path}.task`, problems);
      const read = value.get('value');
      if (!TASK_VALUES.includes(read as (typeof TASK_VALUES)[number])) {
        problems.add(`${path}.value`, `one of ${TASK_VALUES.join(', ')}, got ${describeFlowValue(read)}`);
        return undefined;
      }
      return task === undefined ? undefined : { type: 'task', task, value: read as (typeof TASK_VALUES)[number] };
    }
    case 'phase': {
      const phase = idOf(value.get('phase'), `${path}.phase`, problems);
      if (value.get('value') !== 'status') {
        problems.add(
          `${path}.value`,
          `"status" (what a condition reads of a phase), got ${describeFlowValue(value.get('value'))}`,
        );
        return undefined;
      }
      return phase === undefined ? undefined : { type: 'phase', phase, value: 'status' };
    }
    case 'variable':
    case 'function':
      problems.add(
        `${path}.type`,
        `"${type}" operands are not supported by gex: compare a task's job or a phase's status`,
      );
      return undefined;
    default:
      problems.add(`${path}.type`, `"operator", "const", "task" or "phase", got ${describeFlowValue(type)}`);
      return undefined;
  }
}

function readOperator(
  value: Map<string, JsonValue>,
  path: string,
  problems: FlowProblems,
  depth: number,
): FlowCondition | undefined {
  const operator = value.get('operator');
  const known = [...VALUE_OPERATORS, ...PHASE_OPERATORS] as readonly string[];
  if (typeof operator !== 'string' || !known.includes(operator)) {
    problems.add(`${path}.operator`, `one of ${known.join(', ')}, got ${describeFlowValue(operator)}`);
    return undefined;
  }
  const raw = value.get('operands');
  if (!isList(raw) || raw.length === 0) {
    problems.add(`${path}.operands`, `a non-empty list of conditions, got ${describeFlowValue(raw)}`);
    return undefined;
  }
  if (raw.length > MAX_OPERANDS) {
    problems.add(`${path}.operands`, `${raw.length} operands; at most ${MAX_OPERANDS}`);
    return undefined;
  }
  const operands = raw.flatMap((operand, index) => {
    const parsed = parseCondition(operand, `${path}.operands[${index}]`, problems, depth + 1);
    return parsed ? [parsed] : [];
  });
  const comparing = !['AND', 'OR', ...PHASE_OPERATORS].includes(operator);
  if (comparing && raw.length !== 2)
    problems.add(`${path}.operands`, `${operator} compares two operands, got ${raw.length}`);
  let phase: string | undefined;
  if (operator === 'ALL_TASKS_IN_PHASE' || operator === 'ANY_TASKS_IN_PHASE') {
    phase = idOf(value.get('phase'), `${path}.phase`, problems);
  }
  if (operands.length !== raw.length) return undefined;
  return { type: 'operator', operator: operator as ConditionOperator, phase, operands };
}

function idOf(value: JsonValue | undefined, path: string, problems: FlowProblems): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value))) return String(value);
  problems.add(path, `an id (a non-empty string or an integer), got ${describeFlowValue(value)}`);
  return undefined;
}
