import { isJsonObject, type JsonValue } from '../json/value.js';
import { isIntegerKey } from './arrays.js';

/**
 * Keboola php-utils `getDataFromPath`: a path equal to the separator is the value itself;
 * otherwise each step of the path split at the separator must be an existing object property
 * (its value may be null) or a set, non-null list index (`""` is one step: the property "").
 * A missing step gives undefined, so callers can tell a missing path from a null value.
 */
export function getDataFromPath(data: JsonValue, path: string, separator = '.'): JsonValue | undefined {
  return path === separator ? data : walk(data, path, separator);
}

/**
 * `getDataFromPath` with php-utils' own result for a missing path (null) and the path a mapping
 * key: PHP holds an integer-like key as an int, which never equals the (string) separator.
 */
export function getDataFromMappingPath(data: JsonValue, path: string, separator: string): JsonValue {
  return (path === separator && !isIntegerKey(path) ? data : walk(data, path, separator)) ?? null;
}

function walk(data: JsonValue, path: string, separator: string): JsonValue | undefined {
  let current: JsonValue = data;
  for (const key of path.split(separator)) {
    if (isJsonObject(current)) {
      if (!current.has(key)) return undefined;
      current = current.get(key)!;
    } else if (Array.isArray(current)) {
      const item = isIntegerKey(key) ? current[Number(key)] : undefined;
      if (item === undefined || item === null) return undefined;
      current = item;
    } else return undefined;
  }
  return current;
}
