import { isJsonObject, isList, type JsonObject, type JsonValue } from '../../json/index.js';
import { describeFlowValue, flowId, FlowProblems, quoteId, requiredName } from './flow-problems.js';
import { readRetry, readTask } from './flow-tasks.js';
import { parseCondition, type FlowCondition } from './flow-conditions.js';
import { phaseOrder } from './phase-order.js';
import {
  FLOW_COMPONENT_ID,
  FLOW_LIMITS,
  isFlowComponent,
  type FlowComponentId,
  type FlowDefinition,
  type FlowPhase,
  type FlowTask,
  type FlowTransition,
} from './flow-model.js';

/**
 * Reads a flow configuration with Keboola's rules, collecting every problem with its path
 * (`tasks[2].phase`): ids are strings or integers compared as strings and unique; names required;
 * a task's phase, `dependsOn` and `goto` must name phases; a `dependsOn` cycle, an unknown
 * operator or operand, a flow running itself and sizes past FLOW_LIMITS are refused.
 * Throws FlowDefinitionError; unknown keys are ignored (they stay stored as written).
 */
export function parseFlowDefinition(
  componentId: FlowComponentId,
  configuration: JsonValue,
  self?: { configId: string },
): FlowDefinition {
  const problems = new FlowProblems();
  const body = isJsonObject(configuration) ? configuration : undefined;
  if (!body)
    problems.add(
      '',
      `a flow configuration is an object with "phases" and "tasks", got ${describeFlowValue(configuration)}`,
    );
  const phaseItems = listAt(body, 'phases', problems);
  const taskItems = listAt(body, 'tasks', problems);
  if (phaseItems.length > FLOW_LIMITS.phases) {
    problems.add('phases', `${phaseItems.length} phases; a flow holds at most ${FLOW_LIMITS.phases}`);
  }
  if (taskItems.length > FLOW_LIMITS.tasks) {
    problems.add('tasks', `${taskItems.length} tasks; a flow holds at most ${FLOW_LIMITS.tasks}`);
  }
  const conditional = componentId === FLOW_COMPONENT_ID;
  // each read item with the path it was written at: a message names the item as written
  const readPhases = phaseItems.slice(0, FLOW_LIMITS.phases).flatMap((item, index) => {
    const path = `phases[${index}]`;
    const phase = readPhase(item, path, conditional, problems);
    return phase ? [{ phase, path }] : [];
  });
  const phases = readPhases.map(({ phase }) => phase);
  const phaseIds = new Set<string>();
  for (const { phase, path } of readPhases) {
    if (phaseIds.has(phase.id)) problems.add(`${path}.id`, `the phase id ${quoteId(phase.id)} is used twice`);
    phaseIds.add(phase.id);
  }
  const readTasks = taskItems.slice(0, FLOW_LIMITS.tasks).flatMap((item, index) => {
    const path = `tasks[${index}]`;
    const task = readTask(item, path, conditional, problems);
    return task ? [{ task, path }] : [];
  });
  const tasks = readTasks.map(({ task }) => task);
  checkTasks(readTasks, phaseIds, componentId, self, problems);
  for (const { phase, path } of readPhases) checkPhaseLinks(phase, path, phaseIds, tasks, problems);
  const ordered = conditional ? phases : phaseOrder(phases, problems);
  problems.throwIfAny(componentId);
  return { componentId, phases: ordered, tasks };
}

function listAt(body: JsonObject | undefined, key: string, problems: FlowProblems): JsonValue[] {
  const value = body?.get(key);
  if (value === undefined || value === null) return [];
  if (isList(value)) return value;
  problems.add(key, `a list, got ${describeFlowValue(value)}`);
  return [];
}

function readPhase(item: JsonValue, path: string, conditional: boolean, problems: FlowProblems): FlowPhase | undefined {
  if (!isJsonObject(item)) {
    problems.add(path, `a phase is an object with "id" and "name", got ${describeFlowValue(item)}`);
    return undefined;
  }
  const id = flowId(item.get('id'), `${path}.id`, problems);
  const name = requiredName(item, path, problems);
  const dependsOn = idList(item.get('dependsOn'), `${path}.dependsOn`, problems);
  const next = conditional ? readTransitions(item.get('next'), `${path}.next`, problems) : [];
  const retry = conditional ? readRetry(item.get('retry'), `${path}.retry`, problems) : undefined;
  return id === undefined ? undefined : { id, name, dependsOn, next, retry };
}

function idList(value: JsonValue | undefined, path: string, problems: FlowProblems): string[] {
  if (value === undefined || value === null) return [];
  if (!isList(value)) {
    problems.add(path, `a list of phase ids, got ${describeFlowValue(value)}`);
    return [];
  }
  return value.flatMap((one, index) => {
    const id = flowId(one, `${path}[${index}]`, problems);
    return id === undefined ? [] : [id];
  });
}

function readTransitions(value: JsonValue | undefined, path: string, problems: FlowProblems): FlowTransition[] {
  if (value === undefined || value === null) return [];
  if (!isList(value)) {
    problems.add(path, `a list of transitions ({id, condition?, goto}), got ${describeFlowValue(value)}`);
    return [];
  }
  return value.flatMap((item, index) => {
    const at = `${path}[${index}]`;
    if (!isJsonObject(item)) {
      problems.add(at, `a transition is an object with "id" and "goto", got ${describeFlowValue(item)}`);
      return [];
    }
    const id = item.has('id') ? flowId(item.get('id'), `${at}.id`, problems) : String(index);
    const target = item.get('goto');
    let goto: string | null | undefined = null;
    if (target === undefined) problems.add(`${at}.goto`, 'required: the id of the next phase, or null to end the flow');
    else if (target !== null) goto = flowId(target, `${at}.goto`, problems);
    const raw = item.get('condition');
    const condition = raw === undefined || raw === null ? undefined : parseCondition(raw, `${at}.condition`, problems);
    return id === undefined || goto === undefined ? [] : [{ id, condition, goto }];
  });
}

function checkTasks(
  tasks: Array<{ task: FlowTask; path: string }>,
  phaseIds: Set<string>,
  componentId: FlowComponentId,
  self: { configId: string } | undefined,
  problems: FlowProblems,
): void {
  const seen = new Set<string>();
  const perPhase = new Map<string, number>();
  for (const { task, path } of tasks) {
    if (seen.has(task.id)) problems.add(`${path}.id`, `the task id ${quoteId(task.id)} is used twice`);
    seen.add(task.id);
    if (!phaseIds.has(task.phase)) problems.add(`${path}.phase`, `no phase has the id ${quoteId(task.phase)}`);
    const count = (perPhase.get(task.phase) ?? 0) + 1;
    perPhase.set(task.phase, count);
    if (count === FLOW_LIMITS.tasksPerPhase + 1) {
      problems.add(
        `${path}.phase`,
        `the phase ${quoteId(task.phase)} holds more than ${FLOW_LIMITS.tasksPerPhase} tasks`,
      );
    }
    const action = task.action;
    if (action.type === 'job' && isFlowComponent(action.componentId)) {
      const itself = action.componentId === componentId && self !== undefined && action.configId === self.configId;
      problems.add(
        `${path}.task.componentId`,
        itself ? 'a flow cannot run itself' : 'a flow cannot run another flow in gex: put its phases here',
      );
    }
  }
}

function checkPhaseLinks(
  phase: FlowPhase,
  path: string,
  phaseIds: Set<string>,
  tasks: FlowTask[],
  problems: FlowProblems,
): void {
  phase.dependsOn.forEach((id, index) => {
    if (id === phase.id) problems.add(`${path}.dependsOn[${index}]`, 'a phase cannot depend on itself');
    else if (!phaseIds.has(id)) problems.add(`${path}.dependsOn[${index}]`, `no phase has the id ${quoteId(id)}`);
  });
  const taskIds = new Set(tasks.map((task) => task.id));
  phase.next.forEach((transition, index) => {
    if (transition.goto !== null && !phaseIds.has(transition.goto)) {
      problems.add(`${path}.next[${index}].goto`, `no phase has the id ${quoteId(transition.goto)}`);
    }
    if (transition.condition)
      checkConditionLinks(transition.condition, `${path}.next[${index}].condition`, phaseIds, taskIds, problems);
  });
}

function checkConditionLinks(
  condition: FlowCondition,
  path: string,
  phaseIds: Set<string>,
  taskIds: Set<string>,
  problems: FlowProblems,
): void {
  if (condition.type === 'phase' && !phaseIds.has(condition.phase)) {
    problems.add(`${path}.phase`, `no phase has the id ${quoteId(condition.phase)}`);
  } else if (condition.type === 'task' && condition.task !== '*' && !taskIds.has(condition.task)) {
    // `*`: each task of the phase an aggregated operator (ALL_TASKS_IN_PHASE …) walks
    problems.add(`${path}.task`, `no task has the id ${quoteId(condition.task)}`);
  } else if (condition.type === 'operator') {
    if (condition.phase !== undefined && !phaseIds.has(condition.phase)) {
      problems.add(`${path}.phase`, `no phase has the id ${quoteId(condition.phase)}`);
    }
    condition.operands.forEach((operand, index) =>
      checkConditionLinks(operand, `${path}.operands[${index}]`, phaseIds, taskIds, problems),
    );
  }
}
