import { isJsonObject, isList, type JsonValue } from '../../../json/index.js';
import { FLOW_COMPONENT_ID, ORCHESTRATOR_COMPONENT_ID, type FlowComponentId } from '../../../store/flows/flow-model.js';

export const FLOW_COMPONENT_CHOICES = [ORCHESTRATOR_COMPONENT_ID, FLOW_COMPONENT_ID] as const;

/**
 * The flow body of a file: the body itself (`{phases, tasks}`), or a configuration document or
 * Storage API answer holding it under `configuration`.
 */
export function flowBodyOf(document: JsonValue): JsonValue {
  const inner = isJsonObject(document) ? document.get('configuration') : undefined;
  return isJsonObject(document) && !document.has('phases') && isJsonObject(inner) ? inner : document;
}

/** keboola.flow when any phase has transitions or any task a type; keboola.orchestrator otherwise. */
export function guessedFlowComponent(body: JsonValue): FlowComponentId {
  if (!isJsonObject(body)) return ORCHESTRATOR_COMPONENT_ID;
  const phases = body.get('phases');
  const tasks = body.get('tasks');
  const conditional =
    (isList(phases) && phases.some((p) => isJsonObject(p) && (p.has('next') || p.has('retry')))) ||
    (isList(tasks) &&
      tasks.some(
        (t) => isJsonObject(t) && isJsonObject(t.get('task')) && (t.get('task') as Map<string, JsonValue>).has('type'),
      ));
  return conditional ? FLOW_COMPONENT_ID : ORCHESTRATOR_COMPONENT_ID;
}
