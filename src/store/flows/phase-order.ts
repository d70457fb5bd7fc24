import type { FlowPhase } from './flow-model.js';
import type { FlowProblems } from './flow-problems.js';
import { quoteId } from './flow-problems.js';

/**
 * keboola.orchestrator's phases in run order: each after every phase it depends on, otherwise as
 * written (Kahn's algorithm, stable). A `dependsOn` cycle is a problem naming its phases.
 */
export function phaseOrder(phases: FlowPhase[], problems: FlowProblems): FlowPhase[] {
  const byId = new Map(phases.map((phase) => [phase.id, phase]));
  const waitingOn = new Map(
    phases.map((phase) => [phase.id, new Set(phase.dependsOn.filter((id) => byId.has(id) && id !== phase.id))]),
  );
  const ordered: FlowPhase[] = [];
  const placed = new Set<string>();
  let progress = true;
  while (ordered.length < byId.size && progress) {
    progress = false;
    for (const phase of phases) {
      if (placed.has(phase.id)) continue;
      const deps = waitingOn.get(phase.id) ?? new Set();
      if ([...deps].every((id) => placed.has(id))) {
        ordered.push(phase);
        placed.add(phase.id);
        progress = true;
      }
    }
  }
  if (ordered.length < byId.size) {
    const stuck = phases.filter((phase) => !placed.has(phase.id)).map((phase) => quoteId(phase.id));
    problems.add('phases', `dependsOn forms a cycle among the phases ${stuck.slice(0, 10).join(', ')}`);
  }
  return ordered;
}
