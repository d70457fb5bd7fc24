import { isJsonObject, type JsonValue } from '../../json/index.js';

/**
 * Keboola php-utils `getDataFromPath`: `path === separator` is the value itself; otherwise each
 * step must be an existing object property (its value may be null) or a set, non-null list index.
 * A missing step gives undefined.
 */
export function lookupPath(data: JsonValue, path: string, separator = '.'): JsonValue | undefined {
  if (path === separator) return data;
  let current: JsonValue | undefined = data;
  for (const key of path.split(separator)) {
    if (isJsonObject(current)) {
      if (!current.has(key)) return undefined;
      current = current.get(key);
    } else if (Array.isArray(current)) {
      const item: JsonValue | undefined = /^\d+$/.test(key) ? current[Number(key)] : undefined;
      if (item === undefined || item === null) return undefined;
      current = item;
    } else return undefined;
  }
  return current;
}
