/**
 * The value model shared by the whole extractor.
 *
 * Generic Extractor is PHP: JSON objects keep their key order (also for integer-like keys, which a
 * plain JS object would move to the front), integers and floats are different types (`1` vs `1.0`
 * matter in hashes) and int64 values survive exactly. So JSON is decoded into:
 *   - objects  -> Map (insertion order, duplicate key: last value at the first key's position)
 *   - integers -> number when |n| <= 2^53, bigint up to int64
 *   - floats   -> JsonFloat (also integers beyond int64, as PHP does)
 */
export class JsonFloat {
  constructor(readonly value: number) {}
}

export type JsonObject = Map<string, JsonValue>;
export type JsonScalar = string | number | bigint | boolean | JsonFloat;
export type JsonValue = null | JsonScalar | JsonValue[] | JsonObject;

export function isJsonObject(v: unknown): v is JsonObject {
  return v instanceof Map;
}

export function isList(v: unknown): v is JsonValue[] {
  return Array.isArray(v);
}

export function isScalar(v: unknown): v is JsonScalar {
  const t = typeof v;
  return t === 'string' || t === 'number' || t === 'boolean' || t === 'bigint' || v instanceof JsonFloat;
}

export function isNumber(v: unknown): v is number | bigint | JsonFloat {
  return typeof v === 'number' || typeof v === 'bigint' || v instanceof JsonFloat;
}

/** Converts the decoded value into plain JS (for JSON schema validation and display only). */
export function toPlain(v: JsonValue): unknown {
  if (v instanceof Map) {
    const o: Record<string, unknown> = {};
    // defined, not assigned: a key "__proto__" stays a key (an assignment would set the prototype)
    for (const [k, x] of v)
      Object.defineProperty(o, k, { value: toPlain(x), enumerable: true, writable: true, configurable: true });
    return o;
  }
  if (Array.isArray(v)) return v.map(toPlain);
  if (v instanceof JsonFloat) return v.value;
  if (typeof v === 'bigint') return Number(v);
  return v;
}

/** Converts plain JS data (e.g. built in code or tests) into the value model. */
export function fromPlain(v: unknown): JsonValue {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) return v.map(fromPlain);
  if (v instanceof Map || v instanceof JsonFloat) return v as JsonValue;
  switch (typeof v) {
    case 'string':
    case 'boolean':
    case 'bigint':
      return v;
    case 'number':
      return Number.isInteger(v) && Math.abs(v) <= Number.MAX_SAFE_INTEGER
        ? Object.is(v, -0)
          ? 0
          : v
        : new JsonFloat(v);
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
  if (a instanceof JsonFloat) return b instanceof JsonFloat && Object.is(a.value, b.value);
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
