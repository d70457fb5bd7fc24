import { displayText } from '../../common/log-text.js';
import { toPlain } from '../../json/index.js';
import type { FlowCondition } from '../../store/flows/flow-conditions.js';
import type { FlowDefinition, FlowTask } from '../../store/flows/flow-model.js';

/** A status per phase and task id, when the graph shows a flow job (`gex jobs show`). */
export interface FlowGraphStatuses {
  phases: ReadonlyMap<string, string>;
  tasks: ReadonlyMap<string, string>;
}

/**
 * A flow's phases and tasks as a graph for a terminal: phases in run order, each with what it
 * waits for (keboola.orchestrator) or where it goes (keboola.flow), its tasks below it. Every
 * name and id is made safe for a terminal (no control characters).
 */
export function flowGraph(definition: FlowDefinition, statuses?: FlowGraphStatuses): string {
  const lines: string[] = [];
  const names = new Map(definition.phases.map((phase) => [phase.id, displayText(phase.name)]));
  for (const phase of definition.phases) {
    const status = statuses?.phases.get(phase.id);
    lines.push(`${displayText(phase.name)} [phase ${displayText(phase.id)}]${status ? `  ${status}` : ''}`);
    if (phase.dependsOn.length > 0) {
      lines.push(`  after: ${phase.dependsOn.map((id) => names.get(id) ?? displayText(id)).join(', ')}`);
    }
    const tasks = definition.tasks.filter((task) => task.phase === phase.id);
    if (tasks.length === 0) lines.push('  (no tasks)');
    tasks.forEach((task, index) => {
      const last = index === tasks.length - 1 && phase.next.length === 0;
      lines.push(`  ${last ? '└─' : '├─'} ${taskLine(task, statuses?.tasks.get(task.id))}`);
    });
    phase.next.forEach((transition, index) => {
      const target = transition.goto === null ? 'end' : (names.get(transition.goto) ?? displayText(transition.goto));
      const when = transition.condition ? ` when ${conditionText(transition.condition)}` : '';
      lines.push(`  ${index === phase.next.length - 1 ? '└─' : '├─'} → ${target}${when}`);
    });
    if (definition.componentId === 'keboola.flow' && phase.next.length === 0) lines.push('  → end');
  }
  if (definition.phases.length === 0) lines.push('(no phases)');
  return `${lines.join('\n')}\n`;
}

function taskLine(task: FlowTask, status: string | undefined): string {
  const action = task.action;
  const what =
    action.type === 'job'
      ? `${displayText(action.componentId)} ${displayText(action.configId)}${action.configRowIds.length ? ` rows ${action.configRowIds.map(displayText).join(',')}` : ''}`
      : `${action.channel} notification to ${action.recipients.length} recipient(s)`;
  const flags = [
    !task.enabled ? 'disabled' : '',
    task.continueOnFailure ? 'continue on failure' : '',
    action.type === 'job' && action.delaySeconds ? `delay ${action.delaySeconds}s` : '',
    action.type === 'job' && action.retry ? `retry ×${action.retry.maxRetries}` : '',
  ].filter(Boolean);
  return `${displayText(task.name)} [task ${displayText(task.id)}]: ${what}${flags.length ? ` (${flags.join(', ')})` : ''}${status ? `  ${status}` : ''}`;
}

/** A condition in one line: `phase extract status EQUALS "success"`. */
export function conditionText(condition: FlowCondition): string {
  switch (condition.type) {
    case 'const':
      return displayText(JSON.stringify(toPlain(condition.value)));
    case 'phase':
      return `phase ${displayText(condition.phase)} status`;
    case 'task':
      return `task ${displayText(condition.task)} ${condition.value}`;
    case 'operator': {
      const parts = condition.operands.map((operand) => {
        const text = conditionText(operand);
        return operand.type === 'operator' ? `(${text})` : text;
      });
      if (condition.operator === 'AND' || condition.operator === 'OR') return parts.join(` ${condition.operator} `);
      if (condition.operands.length === 2 && !condition.operator.includes('TASKS')) {
        return `${parts[0]} ${condition.operator} ${parts[1]}`;
      }
      const scope = condition.phase === undefined ? '' : `${displayText(condition.phase)}: `;
      return `${condition.operator}(${scope}${parts.join(', ')})`;
    }
  }
}
