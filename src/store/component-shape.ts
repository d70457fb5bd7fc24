import { isJsonObject, type JsonObject, type JsonValue } from '../json/index.js';
import type { Component } from './types.js';

/**
 * Keboola's component object: every key in Keboola's order, each with the value Keboola gives a
 * component that does not set it. Clients check for these keys (the Python client asserts `uri`),
 * so a component imported with fewer fields still answers with all of them.
 */
const KEBOOLA_COMPONENT_KEYS: ReadonlyArray<readonly [string, (c: Component) => JsonValue]> = [
  ['id', (c) => c.id],
  ['type', (c) => c.type],
  ['name', (c) => c.name],
  ['description', () => ''],
  ['longDescription', () => ''],
  ['version', () => 1],
  ['complexity', () => 'medium'],
  ['categories', () => []],
  ['hasUI', () => false],
  ['hasRun', () => false],
  ['ico32', () => ''],
  ['ico64', () => ''],
  ['ico128', () => ''],
  ['data', () => new Map()],
  ['flags', () => []],
  ['configurationSchema', () => new Map()],
  ['configurationRowSchema', () => new Map()],
  ['emptyConfiguration', () => new Map()],
  ['emptyConfigurationRow', () => new Map()],
  ['createConfigurationRowSchema', () => new Map()],
  ['uiOptions', () => new Map()],
  ['configurationDescription', () => null],
  ['features', () => []],
  ['expiredOn', () => null],
  ['dataTypesConfiguration', () => new Map()],
  ['processorConfiguration', () => new Map()],
  // where Keboola runs a component: its Docker runner's address for the component id
  ['uri', (c) => `https://syrup.keboola.com/docker/${encodeURIComponent(c.id)}`],
  ['documentationUrl', () => ''],
];

export const KEBOOLA_COMPONENT_KEY_NAMES: readonly string[] = KEBOOLA_COMPONENT_KEYS.map(([key]) => key);

/**
 * The component as Keboola shows it: the registered definition's values (kept as imported, `#`
 * values still ciphers), Keboola's defaults for the keys it lacks, then any further keys it has.
 */
export function keboolaComponentShape(c: Component): JsonObject {
  const definition: JsonObject = isJsonObject(c.definition) ? c.definition : new Map();
  const shape: JsonObject = new Map();
  for (const [key, fallback] of KEBOOLA_COMPONENT_KEYS) {
    const given = definition.get(key);
    shape.set(key, given === undefined ? fallback(c) : given);
  }
  for (const [key, value] of definition) if (!shape.has(key)) shape.set(key, value);
  return shape;
}
