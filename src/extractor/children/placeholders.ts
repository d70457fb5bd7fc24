import { UserError } from '../../common/errors.js';
import { isJsonObject, isScalar, type JsonObject, type JsonValue } from '../../json/index.js';
import { getDataFromPath, phpToString } from '../../php/index.js';
import type { UserFunctions } from '../functions/user-functions.js';

/** A placeholder of a child endpoint: `{name}` filled from a path of an ancestor's record. */
export interface Placeholder {
  /** as written, including a level prefix: `2:user-id` */
  name: string;
  level: number;
  path: string;
  /** the rest of `{path, …}` when the placeholder is a function of the value */
  fn?: JsonObject;
}

export function parsePlaceholders(definitions: JsonObject): Placeholder[] {
  return [...definitions].map(([name, def]) => {
    const levelMatch = /^(\d+):/.exec(name);
    const level = levelMatch ? Number(levelMatch[1]) : 1;
    if (isJsonObject(def)) {
      const path = def.get('path');
      if (typeof path !== 'string') throw new UserError('GEX_CONFIG_INVALID', `Placeholder '${name}' needs a "path"`);
      const fn = new Map(def);
      fn.delete('path');
      return { name, level, path, fn };
    }
    return { name, level, path: phpToString(def) };
  });
}

export interface ResolvedPlaceholder {
  placeholder: Placeholder;
  /** the value, after the placeholder function */
  value: JsonValue;
}

/**
 * Every combination of a child's own placeholder values for one parent record (`ancestors[0]` =
 * the parent's record, `[1]` the grandparent's…). A list value fans out to one child per element;
 * several lists give the cartesian product with the last placeholder varying fastest.
 */
export function placeholderCombinations(placeholders: Placeholder[], ancestors: JsonValue[], functions: UserFunctions): ResolvedPlaceholder[][] {
  const choices = placeholders.map((placeholder) => {
    if (placeholder.level > ancestors.length) {
      throw new UserError('GEX_CONFIG_INVALID', `Level ${placeholder.level} not found in parent results! Maximum level is ${ancestors.length} (placeholder '${placeholder.name}').`);
    }
    const record = ancestors[placeholder.level - 1];
    const found = getDataFromPath(record, placeholder.path, '.');
    if (found === undefined) throw new UserError('GEX_API_RESPONSE_INVALID', `No value found for ${placeholder.name} in parent result. (level: ${placeholder.level})`);
    const values = Array.isArray(found) ? found : [found];
    return values.map((value) => ({ placeholder, value: applyFunction(placeholder, value, functions) }));
  });
  let combinations: ResolvedPlaceholder[][] = [[]];
  for (const options of choices) combinations = combinations.flatMap((combo) => options.map((option) => [...combo, option]));
  return combinations;
}

function applyFunction(placeholder: Placeholder, value: JsonValue, functions: UserFunctions): JsonValue {
  if (!placeholder.fn) return value;
  return functions.withUrlencode().evaluate(placeholder.fn, { placeholder: new Map([['value', value]]) });
}

/**
 * The placeholders of a child instance: the parent's resolved ones with the child's own over them
 * (same name: the child's value, at the parent's position) — GE inherits values, not definitions.
 */
export function inheritResolved(inherited: ResolvedPlaceholder[], own: ResolvedPlaceholder[]): ResolvedPlaceholder[] {
  const byName = new Map(inherited.map((r) => [r.placeholder.name, r]));
  for (const r of own) byName.set(r.placeholder.name, r);
  return [...byName.values()];
}

/** Plain string replacement of each `{name}` (no URL encoding; Guzzle encodes leftovers later). */
export function fillEndpoint(endpoint: string, resolved: ResolvedPlaceholder[]): string {
  let out = endpoint;
  for (const { placeholder, value } of resolved) {
    if (!isScalar(value) && value !== null) throw new UserError('GEX_API_RESPONSE_INVALID', `Placeholder '${placeholder.name}' resolved to an object or list, which cannot go into an endpoint`);
    out = out.split(`{${placeholder.name}}`).join(phpToString(value));
  }
  return out;
}

/** The `parent_<path>` columns of a child's rows; one column per distinct path, the last value wins. */
export function parentColumns(resolved: ResolvedPlaceholder[]): JsonObject {
  const columns: JsonObject = new Map();
  for (const { placeholder, value } of resolved) {
    const key = placeholder.path.startsWith('parent_') ? placeholder.path : `parent_${placeholder.path}`;
    columns.set(key, value);
  }
  return columns;
}
