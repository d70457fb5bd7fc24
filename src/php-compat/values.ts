import { formatFloat } from './float-format.js';

/**
 * The value model shared by the whole extractor.
 *
 * Generic Extractor is PHP: JSON objects keep their key order (also for integer-like keys, which a
 * plain JS object would move to the front), integers and floats are different types (`1` vs `1.0`
 * matter in hashes) and int64 values survive exactly. So JSON is decoded into:
 *   - objects  -> Map (insertion order, duplicate key: last value at the first key's position)
 *   - integers -> number when |n| <= 2^53, bigint up to int64
 *   - floats   -> PhpFloat (also integers beyond int64, as PHP does)
 */
export class PhpFloat {
  constructor(readonly value: number) {}
}

export type JsonObject = Map<string, JsonValue>;
export type JsonScalar = string | number | bigint | boolean | PhpFloat;
export type JsonValue = null | JsonScalar | JsonValue[] | JsonObject;

export function isJsonObject(v: unknown): v is JsonObject {
  return v instanceof Map;
}

export function isList(v: unknown): v is JsonValue[] {
  return Array.isArray(v);
}

export function isScalar(v: unknown): v is JsonScalar {
  const t = typeof v;
  return t === 'string' || t === 'number' || t === 'boolean' || t === 'bigint' || v instanceof PhpFloat;
}

export function isNumber(v: unknown): v is number | bigint | PhpFloat {
  return typeof v === 'number' || typeof v === 'bigint' || v instanceof PhpFloat;
}

/**
 * PHP `empty()`. Configuration files are decoded by GE into PHP arrays, where `{}` is an empty
 * array; response objects are `stdClass` and never empty — hence `objectsAreArrays`.
 */
export function phpEmpty(v: JsonValue | undefined, objectsAreArrays = true): boolean {
  if (v === null || v === undefined || v === false || v === '' || v === '0') return true;
  if (typeof v === 'number') return v === 0;
  if (typeof v === 'bigint') return v === 0n;
  if (v instanceof PhpFloat) return v.value === 0;
  if (Array.isArray(v)) return v.length === 0;
  if (v instanceof Map) return objectsAreArrays && v.size === 0;
  return false;
}

/** PHP `(bool)` cast. */
export function phpBool(v: JsonValue | undefined, objectsAreArrays = true): boolean {
  return !phpEmpty(v, objectsAreArrays);
}

/** PHP `is_numeric()` for strings: optional whitespace, sign, digits, fraction, exponent. */
export function isNumericString(s: string): boolean {
  return /^[ \t\n\r\v\f]*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?[ \t\n\r\v\f]*$/.test(s);
}

/** PHP `(int)` cast of a scalar (strings use their leading numeric part, floats truncate). */
export function phpIntCast(v: JsonValue | undefined): number {
  if (v === null || v === undefined || v === false) return 0;
  if (v === true) return 1;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof PhpFloat) return Number.isFinite(v.value) ? Math.trunc(v.value) : 0;
  if (typeof v === 'string') {
    const m = /^[ \t\n\r\v\f]*([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?)/.exec(v);
    if (!m) return 0;
    const n = Number(m[1]);
    return Number.isFinite(n) ? Math.trunc(n) : 0;
  }
  if (Array.isArray(v)) return v.length === 0 ? 0 : 1;
  return 1;
}

/** Converts the decoded value into plain JS (for JSON schema validation and display only). */
export function toPlain(v: JsonValue): unknown {
  if (v instanceof Map) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of v) o[k] = toPlain(x);
    return o;
  }
  if (Array.isArray(v)) return v.map(toPlain);
  if (v instanceof PhpFloat) return v.value;
  if (typeof v === 'bigint') return Number(v);
  return v;
}

/** Converts plain JS data (e.g. built in code or tests) into the value model. */
export function fromPlain(v: unknown): JsonValue {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) return v.map(fromPlain);
  if (v instanceof Map || v instanceof PhpFloat) return v as JsonValue;
  switch (typeof v) {
    case 'string':
    case 'boolean':
    case 'bigint':
      return v;
    case 'number':
      return Number.isInteger(v) && Math.abs(v) <= Number.MAX_SAFE_INTEGER ? (Object.is(v, -0) ? 0 : v) : new PhpFloat(v);
    case 'object': {
      const m: JsonObject = new Map();
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) m.set(k, fromPlain(x));
      return m;
    }
    default:
      throw new TypeError(`cannot represent ${typeof v} as JSON`);
  }
}

/** Reads a nested member of an object by a list of keys; undefined when any step is missing. */
export function getIn(v: JsonValue | undefined, keys: readonly string[]): JsonValue | undefined {
  let cur: JsonValue | undefined = v;
  for (const k of keys) {
    if (!(cur instanceof Map)) return undefined;
    cur = cur.get(k);
  }
  return cur;
}

/** Structural equality with PHP `serialize()` semantics (key order and int/float matter). */
export function deepEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (a instanceof PhpFloat) return b instanceof PhpFloat && Object.is(a.value, b.value);
  if (typeof a === 'bigint' || typeof b === 'bigint') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (a instanceof Map) {
    if (!(b instanceof Map) || a.size !== b.size) return false;
    const bi = b.entries();
    for (const [k, x] of a) {
      const next = bi.next().value as [string, JsonValue];
      if (next[0] !== k || !deepEqual(x, next[1])) return false;
    }
    return true;
  }
  return false;
}

/** PHP string conversion of a scalar: `true` is "1", `false` and null are "", floats 14 digits. */
export function phpToString(v: JsonValue | undefined): string {
  if (v === null || v === undefined || v === false) return '';
  if (v === true) return '1';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (v instanceof PhpFloat) return formatFloat(v.value, 14, 'E');
  return Array.isArray(v) ? 'Array' : 'Object';
}

/**
 * PHP `array_replace_recursive` on configuration values (PHP arrays): keys of `replacement`
 * replace those of `base` in place (new keys are appended); where both sides hold arrays the
 * merge recurses, so lists are merged index by index and an empty array replaces nothing.
 * With `replacementObjectsOpaque`, objects nested in `replacement` count as PHP objects: they
 * replace the base value whole and are never merged into; only the top level and lists recurse.
 * GE turns a configuration's arrays into objects only where they are not lists, so an empty object
 * and one keyed "0", "1", … in order stay arrays and merge by index.
 */
export function arrayReplaceRecursive(base: JsonValue, replacement: JsonValue, options: { replacementObjectsOpaque?: boolean } = {}): JsonValue {
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
