import { formatFloat } from './float-format.js';
import { integerToken } from '../json/decode.js';
import { JsonFloat, type JsonValue } from '../json/value.js';

/**
 * The numbers of `json_decode(json_encode($value))` (keboola/php-utils `arrayToObject`), which
 * Generic Extractor applies to every value its user functions see: job params, headers, userData,
 * placeholder functions. GE's JSON parser sets `serialize_precision` to 17 before the first request,
 * so a float is written with 17 significant digits and read back — and one written without a
 * fraction or exponent is read back as an int: 1.0 → 1, 1e15 → 1000000000000000, -0.0 → 0.
 * Every other float comes back as the same float (17 digits always round-trip).
 * The shape of arrays and objects is not touched here.
 */
export function phpJsonRoundTrip(value: JsonValue): JsonValue {
  if (value instanceof JsonFloat) return roundTripFloat(value);
  if (Array.isArray(value)) return value.map(phpJsonRoundTrip);
  if (value instanceof Map) {
    const out = new Map<string, JsonValue>();
    for (const [k, v] of value) out.set(k, phpJsonRoundTrip(v));
    return out;
  }
  return value;
}

function roundTripFloat(f: JsonFloat): JsonValue {
  // json_encode fails on INF and NAN (the caller refuses them before); keep the value as it is
  if (!Number.isFinite(f.value)) return f;
  const token = formatFloat(f.value, 17, 'e');
  return /^-?\d+$/.test(token) ? integerToken(token) : f;
}

/** The keys leading to the first INF or NAN float in `value` (JSON cannot hold them), or null. */
export function findNonFiniteFloat(value: JsonValue): Array<string | number> | null {
  if (value instanceof JsonFloat) return Number.isFinite(value.value) ? null : [];
  const entries: Iterable<[string | number, JsonValue]> = Array.isArray(value)
    ? value.entries()
    : value instanceof Map
      ? value.entries()
      : [];
  for (const [key, v] of entries) {
    const found = findNonFiniteFloat(v);
    if (found !== null) return [key, ...found];
  }
  return null;
}
