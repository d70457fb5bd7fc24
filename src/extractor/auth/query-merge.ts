import { isScalar, type JsonValue } from '../../json/index.js';
import { guzzleQueryBuild, guzzleQueryParse, phpToString } from '../../php/index.js';

/** PHP `array_unique` compares values as strings; an array is "Array". */
function uniqueKey(value: JsonValue): string {
  return value !== null && !isScalar(value) ? 'Array' : phpToString(value);
}

/**
 * GE `Utils::mergeQueries($query, $authQuery, $mergeToArray)` (docs/ge-behaviour.md#auth-query-rewriting): the request's
 * query is parsed with Guzzle `Query::parse`, the auth parameters are laid over it (same key
 * replaced in place, new keys appended) and it is rebuilt with `Query::build` in RFC 3986 mode —
 * so every request is re-encoded, even when nothing is added (`+` becomes `%20`).
 *
 * With `mergeToArray` (login auth) a key the request already has is removed from its place and,
 * after all other keys, both values are appended as `key[0]`, `key[1]` (duplicate values dropped,
 * keeping the indexes of the survivors): EX081.
 */
export function mergeQueries(query: string, extra: Map<string, JsonValue>, mergeToArray = false): string {
  const merged = guzzleQueryParse(query) as Map<string, JsonValue>;
  const toArray = new Map<string, JsonValue[]>();
  for (const [key, value] of extra) {
    if (mergeToArray && merged.has(key)) {
      toArray.set(key, [...(toArray.get(key) ?? [merged.get(key) as JsonValue]), value]);
      merged.delete(key);
    } else {
      merged.set(key, value);
    }
  }
  for (const [key, values] of toArray) {
    const seen = new Set<string>();
    values.forEach((value, i) => {
      const unique = uniqueKey(value);
      if (seen.has(unique)) return;
      seen.add(unique);
      merged.set(`${key}[${i}]`, value);
    });
  }
  return guzzleQueryBuild(merged);
}
