import { phpRawUrlencode, phpUrldecode, phpUrlencode } from './query-string.js';
import { isJsonObject, isScalar, type JsonValue } from '../json/value.js';
import { phpToString } from './casts.js';

/**
 * guzzlehttp/psr7 1.8 `Query::parse` / `Query::build`, which Generic Extractor's auth layers use to
 * rewrite the query string of every request.
 */

/** A parsed query value: a string, `null` for a key without `=`, or a list for a repeated key. */
export type GuzzleQueryValue = string | null | Array<string | null>;

/**
 * `Query::parse($str)`: split on `&` and the first `=`, keys and values decoded (`+` is a space,
 * then `%XX`); a key without `=` has the value null; a repeated key collects a list — except that
 * a key whose first value is null is simply overwritten (PHP `isset` quirk): `a&a=1` → `{a: "1"}`.
 */
export function guzzleQueryParse(query: string): Map<string, GuzzleQueryValue> {
  const result = new Map<string, GuzzleQueryValue>();
  if (query === '') return result;
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    const key = phpUrldecode(eq >= 0 ? pair.slice(0, eq) : pair);
    const value = eq >= 0 ? phpUrldecode(pair.slice(eq + 1)) : null;
    const existing = result.get(key);
    if (existing === undefined || existing === null) result.set(key, value);
    else if (Array.isArray(existing)) existing.push(value);
    else result.set(key, [existing, value]);
  }
  return result;
}

/** PHP `(string)` of a query value: booleans `1`/`""`, floats with 14 digits, arrays `Array`. */
function stringOf(value: JsonValue): string {
  if (value !== null && !isScalar(value)) return 'Array';
  return phpToString(value);
}

/**
 * `Query::build($params, PHP_QUERY_RFC3986)`: keys and values `rawurlencode`d (`urlencode` for
 * RFC 1738), a null value gives the bare key, a list (or object) value repeats the key once per
 * element, `true` is `1` and `false` an empty value (psr7 1.x casts with PHP `(string)`).
 */
export function guzzleQueryBuild(
  params: Map<string, JsonValue> | Map<string, GuzzleQueryValue>,
  encoding: 'RFC3986' | 'RFC1738' = 'RFC3986',
): string {
  const encode = encoding === 'RFC3986' ? phpRawUrlencode : phpUrlencode;
  const pieces: string[] = [];
  const piece = (key: string, value: JsonValue) =>
    pieces.push(value === null ? key : `${key}=${encode(stringOf(value))}`);
  for (const [k, v] of params as Map<string, JsonValue>) {
    const key = encode(k);
    if (Array.isArray(v)) for (const item of v) piece(key, item);
    else if (isJsonObject(v)) for (const item of v.values()) piece(key, item);
    else piece(key, v);
  }
  return pieces.join('&');
}

/** A scalar inside http_build_query: booleans `1`/`0`, floats with 14 significant digits. */
