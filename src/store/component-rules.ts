import type { JsonValue } from '../json/index.js';
import { parseFlowDefinition } from './flows/flow-definition.js';
import { isFlowComponent } from './flows/flow-model.js';

/**
 * The rules a component's configuration must meet to be stored, as Keboola checks them on write:
 * a flow's phases and tasks (FlowDefinitionError, 400, naming each path). Other components'
 * bodies are stored as they come.
 */
export function checkComponentConfiguration(componentId: string, configId: string, configuration: JsonValue): void {
  if (isFlowComponent(componentId)) parseFlowDefinition(componentId, configuration, { configId });
}
