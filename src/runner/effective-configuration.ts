import { isJsonObject, type JsonObject, type JsonValue } from '../json/index.js';
import { arrayReplaceRecursive } from '../php/index.js';

/**
 * A row's effective configuration: the root configuration deep-merged with the row's, the row
 * winning — Keboola's `array_replace_recursive`. Objects merge key by key; lists merge index by
 * index (a row list `[9]` over `[1,2,3]` gives `[9,2,3]`); an empty row list or object changes
 * nothing; `null` in the row replaces.
 */
export function mergeRowConfiguration(root: JsonValue, row: JsonValue): JsonValue {
  return arrayReplaceRecursive(root, row);
}

function objectAt(value: JsonValue | undefined): JsonObject {
  return isJsonObject(value) ? value : new Map();
}

/** The parts of a configuration node the component receives (docs/design.md#merged-configuration). */
export interface ComponentConfig {
  storage: JsonObject;
  parameters: JsonObject;
  authorization: JsonObject;
  /** `processors` are the runner's business and never reach the component */
  processors: JsonValue | undefined;
}

export function splitConfiguration(configuration: JsonValue): ComponentConfig {
  const node = objectAt(configuration);
  return {
    storage: objectAt(node.get('storage')),
    parameters: objectAt(node.get('parameters')),
    authorization: objectAt(node.get('authorization')),
    processors: node.get('processors'),
  };
}

/** `config.json` as the component reads it: storage, parameters, image_parameters, authorization, action. */
export function componentConfigFile(config: ComponentConfig, imageParameters: JsonObject): JsonObject {
  return new Map<string, JsonValue>([
    ['storage', config.storage],
    ['parameters', config.parameters],
    ['image_parameters', imageParameters],
    ['authorization', config.authorization],
    ['action', 'run'],
  ]);
}
