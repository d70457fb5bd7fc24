import { isJsonObject, JsonFloat, type JsonObject, type JsonValue } from '../json/value.js';

/**
 * PHP `array_replace_recursive` on configuration values (PHP arrays): keys of `replacement`
 * replace those of `base` in place (new keys are appended); where both sides hold arrays the
 * merge recurses, so lists are merged index by index and an empty array replaces nothing.
 * With `replacementObjectsOpaque`, objects nested in `replacement` count as PHP objects: they
 * replace the base value whole and are never merged into; only the top level and lists recurse.
 * GE turns a configuration's arrays into objects only where they are not lists, so an empty object
 * and one keyed "0", "1", … in order stay arrays and merge by index.
 */
export function arrayReplaceRecursive(
  base: JsonValue,
  replacement: JsonValue,
  options: { replacementObjectsOpaque?: boolean } = {},
): JsonValue {
  const isArray = (v: JsonValue | undefined): v is JsonObject | JsonValue[] => Array.isArray(v) || v instanceof Map;
  const mergeable = (b: JsonValue | undefined, r: JsonValue): boolean =>
    isArray(b) && (Array.isArray(r) || (r instanceof Map && (!options.replacementObjectsOpaque || isListShaped(r))));
  if (!isArray(base) || !isArray(replacement)) return replacement;
  if (Array.isArray(base) && Array.isArray(replacement)) {
    const result = base.slice();
    replacement.forEach((v, i) => {
      result[i] = i < base.length && mergeable(base[i], v) ? arrayReplaceRecursive(base[i], v, options) : v;
    });
    return result;
  }
  const result = toPhpArrayMap(base);
  for (const [k, v] of toPhpArrayMap(replacement)) {
    const current = result.get(k);
    result.set(k, current !== undefined && mergeable(current, v) ? arrayReplaceRecursive(current, v, options) : v);
  }
  return result;
}

/** Whether an object's keys are "0", "1", … in order (a PHP list, empty included). */
function isListShaped(object: JsonObject): boolean {
  let i = 0;
  for (const key of object.keys()) if (key !== String(i++)) return false;
  return true;
}

/** A configuration value as the PHP array it is (an object or a list), or null for anything else. */
export function asPhpArray(v: JsonValue | undefined): JsonObject | null {
  if (isJsonObject(v)) return v;
  if (Array.isArray(v)) return toPhpArrayMap(v);
  return null;
}

/**
 * The PHP array key a scalar becomes (`$array[$value] = …`): null is "", booleans "1"/"0",
 * floats truncate. Undefined for arrays and objects, which PHP refuses as keys.
 */
export function phpArrayKey(v: JsonValue | undefined): string | undefined {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  if (v === true) return '1';
  if (v === false) return '0';
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (v instanceof JsonFloat) return String(Math.trunc(v.value));
  return undefined;
}

/** A list as the PHP array it is (index keys), a map copied. */
export function toPhpArrayMap(v: JsonObject | JsonValue[]): JsonObject {
  return Array.isArray(v) ? new Map(v.map((x, i) => [String(i), x])) : new Map(v);
}

/**
 * PHP `array_merge` of configuration arrays: string keys of `b` replace those of `a` in place,
 * integer keys (integer-like strings, see isIntegerKey) of both are renumbered 0, 1, … in order.
 */
export function phpArrayMerge(a: JsonObject, b: JsonObject): JsonObject {
  const merged: JsonObject = new Map();
  let next = 0;
  for (const source of [a, b]) {
    for (const [k, v] of source) merged.set(isIntegerKey(k) ? String(next++) : k, v);
  }
  return merged;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** PHP turns array keys that are canonical decimal integers within int64 into integer keys. */
export function isIntegerKey(k: string): boolean {
  if (!/^(0|-?[1-9]\d*)$/.test(k)) return false;
  if (k.length < 16) return true;
  const n = BigInt(k);
  return n >= INT64_MIN && n <= INT64_MAX;
}
