import { UserError } from '../../../common/errors.js';
import { isJsonObject, PhpFloat, type JsonObject, type JsonValue } from '../../../json/index.js';
import { isIntegerKey, toPhpArrayMap } from '../../../php/index.js';

/**
 * Reading `mappings` the way PHP reads the decoded configuration: objects and lists are both
 * arrays, a missing key or an offset into a scalar is simply absent.
 */

/** A configuration value as the PHP array it is (an object or a list), or null for anything else. */
export function phpArray(v: JsonValue | undefined): JsonObject | null {
  if (isJsonObject(v)) return v;
  if (Array.isArray(v)) return toPhpArrayMap(v);
  return null;
}

/** `$value['a']['b']…`, undefined where a step is missing or not an array. */
export function field(v: JsonValue | undefined, ...keys: string[]): JsonValue | undefined {
  let current = v;
  for (const key of keys) {
    const array = phpArray(current);
    if (!array) return undefined;
    current = array.get(key);
  }
  return current;
}

/** The PHP array key a value becomes (`$result[$value] = …`). */
export function arrayKey(v: JsonValue | undefined): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  if (v === true) return '1';
  if (v === false) return '0';
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (v instanceof PhpFloat) return String(Math.trunc(v.value));
  throw new UserError('Bad Json to CSV Mapping configuration: a destination must be a string');
}

/** PHP `gettype()` of a configuration value. */
export function phpType(v: JsonValue | undefined): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number' || typeof v === 'bigint') return 'integer';
  if (v instanceof PhpFloat) return 'double';
  return 'array';
}

/**
 * php-utils `getDataFromPath`: the separator itself is the value; otherwise each step of the path
 * split at the separator must be an existing object property or a set, non-null list index
 * (`""` is one step: the property ""). Missing → null. `path` is a mapping key, which PHP holds
 * as an int when it looks like one: such a key never equals the (string) separator.
 */
export function dataAtPath(path: string, data: JsonValue, separator: string): JsonValue {
  if (path === separator && !isIntegerKey(path)) return data;
  let current: JsonValue = data;
  for (const key of path.split(separator)) {
    if (isJsonObject(current)) {
      if (!current.has(key)) return null;
      current = current.get(key)!;
    } else if (Array.isArray(current)) {
      const item = isIntegerKey(key) ? current[Number(key)] : undefined;
      if (item === undefined || item === null) return null;
      current = item;
    } else return null;
  }
  return current;
}
