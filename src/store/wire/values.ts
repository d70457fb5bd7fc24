import { isJsonObject, JsonFloat, type JsonObject, type JsonValue } from '../../json/index.js';

/**
 * The pieces every wire shape is built from: an object of entries in Keboola's key order (absent
 * values left out), and lenient readers of a field of an answer (a number may come as text).
 */

export type Entries = Array<[string, JsonValue | undefined]>;

export function obj(entries: Entries): JsonObject {
  const m: JsonObject = new Map();
  for (const [k, v] of entries) if (v !== undefined) m.set(k, v);
  return m;
}

class WireError extends Error {}

export function field(o: JsonValue | undefined, key: string): JsonValue | undefined {
  return isJsonObject(o) ? o.get(key) : undefined;
}

export function str(o: JsonValue | undefined, key: string, fallback = ''): string {
  const v = field(o, key);
  if (v === undefined || v === null) return fallback;
  return typeof v === 'string' ? v : String(v instanceof JsonFloat ? v.value : v);
}

export function int(o: JsonValue | undefined, key: string): number {
  const v = field(o, key);
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v);
  if (v instanceof JsonFloat) return v.value;
  throw new WireError(`expected an integer '${key}' in the response`);
}

export function bool(o: JsonValue | undefined, key: string): boolean {
  const v = field(o, key);
  return v === true || v === 1 || v === '1' || v === 'true';
}

export function body(o: JsonValue | undefined, key: string): JsonValue {
  const v = field(o, key);
  return v === undefined ? new Map() : v;
}
