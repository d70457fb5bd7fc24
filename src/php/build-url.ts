import { phpHttpBuildQuery, phpUrldecode } from './query-string.js';
import type { JsonObject } from '../json/value.js';
import { phpEmpty } from './casts.js';

/**
 * Keboola php-utils `buildUrl(endpoint, params)` as Generic Extractor uses it for GET requests:
 * the endpoint's own query is split on `&` and the first `=`, keys kept raw (not decoded, so they
 * are encoded again), values `urldecode`d; params overlay it (existing keys keep their place) and
 * everything is serialised with http_build_query. Top-level params with a PHP-empty key
 * (`""`, `"0"`) are dropped.
 */
export function buildUrl(endpoint: string, params: JsonObject): string {
  if (params.size === 0) return endpoint;
  const hashAt = endpoint.indexOf('#');
  const fragment = hashAt >= 0 ? endpoint.slice(hashAt + 1) : '';
  const withoutFragment = hashAt >= 0 ? endpoint.slice(0, hashAt) : endpoint;
  const queryAt = withoutFragment.indexOf('?');
  const head = queryAt >= 0 ? withoutFragment.slice(0, queryAt) : withoutFragment;
  const query = queryAt >= 0 ? withoutFragment.slice(queryAt + 1) : '';

  const merged: JsonObject = new Map();
  if (query !== '') {
    for (const pair of query.split('&')) {
      const eq = pair.indexOf('=');
      merged.set(eq >= 0 ? pair.slice(0, eq) : pair, eq >= 0 ? phpUrldecode(pair.slice(eq + 1)) : '');
    }
  }
  for (const [key, value] of params) {
    if (!phpEmpty(key)) merged.set(key, value);
  }
  return `${head}?${phpHttpBuildQuery(merged)}${fragment ? `#${fragment}` : ''}`;
}
