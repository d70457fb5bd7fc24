import { UserError } from '../../common/errors.js';
import { isJsonObject, isScalar, type JsonObject, type JsonValue } from '../../json/index.js';
import { getDataFromPath, isIntegerKey, phpToString } from '../../php/index.js';
import { userScriptError, type UserFunctions } from '../functions/user-functions.js';

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
 * The placeholder values of the runs of a child for one parent record, as Generic Extractor's
 * getParamsForChildJobs makes them (`ancestors[0]` = the parent's record, `[1]` the grandparent's…):
 * the values inherited from the ancestors, then the child's own, one value per name — an own name
 * that is inherited keeps the ancestor's position with the child's value. A list value fans out to
 * one run per element; several lists give the cartesian product, the last placeholder varying
 * fastest. No own and no inherited placeholders: no run at all.
 */
export function childCombinations(
  own: Placeholder[],
  inherited: ResolvedPlaceholder[],
  ancestors: JsonValue[],
  functions: UserFunctions,
): ResolvedPlaceholder[][] {
  const byName = new Map<string, ResolvedPlaceholder>();
  for (const resolved of inherited) byName.set(resolved.placeholder.name, resolved);
  for (const placeholder of own) {
    byName.set(placeholder.name, { placeholder, value: resolveOwn(placeholder, ancestors, functions) });
  }
  if (byName.size === 0) return [];
  let combinations: ResolvedPlaceholder[][] = [[]];
  for (const { placeholder, value } of byName.values()) {
    const options = Array.isArray(value) ? value.map((v) => ({ placeholder, value: v })) : [{ placeholder, value }];
    combinations = combinations.flatMap((combo) => options.map((option) => [...combo, option]));
  }
  return combinations;
}

/** An own placeholder's value for this parent record: found at its level, its function applied (before any fan-out). */
function resolveOwn(placeholder: Placeholder, ancestors: JsonValue[], functions: UserFunctions): JsonValue {
  // PHP makes such a name an integer array key, and GE's getPlaceholder() fails on it with a type error
  if (isIntegerKey(placeholder.name)) {
    throw new UserError(
      'GEX_CONFIG_INVALID',
      `The placeholder name '${placeholder.name}' is an integer, which Generic Extractor cannot run ` +
        "(a PHP type error): give it a name with a letter, e.g. 'id'.",
    );
  }
  if (placeholder.level > ancestors.length) {
    const { level, name } = placeholder;
    const max = ancestors.length;
    throw new UserError(
      'GEX_CONFIG_INVALID',
      `Level ${level} not found in parent results! Maximum level is ${max} (placeholder '${name}').`,
    );
  }
  const record = ancestors[placeholder.level - 1];
  const found = getDataFromPath(record, placeholder.path, '.');
  if (found === undefined) {
    throw new UserError(
      'GEX_API_RESPONSE_INVALID',
      `No value found for ${placeholder.name} in parent result. (level: ${placeholder.level})`,
    );
  }
  return applyFunction(placeholder, found, functions);
}

function applyFunction(placeholder: Placeholder, value: JsonValue, functions: UserFunctions): JsonValue {
  if (!placeholder.fn) return value;
  // GE flattens the function's context like configuration arrays: a list value becomes `value.0`,
  // `value.1`… (an empty one nothing), so `{"placeholder": "value"}` finds no value
  if (Array.isArray(value)) throw userScriptError("Error evaluating user function - placeholder 'value' not found!");
  return functions.withUrlencode().evaluate(placeholder.fn, { placeholder: new Map([['value', value]]) });
}

/** Plain string replacement of each `{name}` (no URL encoding; Guzzle encodes leftovers later). */
export function fillEndpoint(endpoint: string, resolved: ResolvedPlaceholder[]): string {
  let out = endpoint;
  for (const { placeholder, value } of resolved) {
    if (!isScalar(value) && value !== null)
      throw new UserError(
        'GEX_API_RESPONSE_INVALID',
        `Placeholder '${placeholder.name}' resolved to an object or list, which cannot go into an endpoint`,
      );
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
