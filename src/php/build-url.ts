import { phpHttpBuildQuery, phpUrldecode } from './query-string.js';
import type { JsonObject } from '../json/value.js';
import { phpEmpty } from './casts.js';
import { phpParseUrl, type PhpUrl } from './parse-url.js';

/**
 * Keboola php-utils `buildUrl(endpoint, params)` as Generic Extractor uses it for GET requests with
 * params: the endpoint goes through PHP's parse_url (control characters become `_`, odd text can read
 * as host, port or scheme, or not at all: see parse-url.ts); its query is split on `&` and the first
 * `=`, keys kept raw (not decoded, so they are encoded again), values `urldecode`d; params overlay it
 * (existing keys keep their place) and everything is serialised with http_build_query. Top-level
 * params with a PHP-empty key (`""`, `"0"`) are dropped. Without params the endpoint is untouched.
 */
export function buildUrl(endpoint: string, params: JsonObject): string {
  if (params.size === 0) return endpoint;
  const parsed = phpParseUrl(endpoint);
  const merged: JsonObject = new Map();
  if (parsed !== false && parsed.query !== undefined) {
    for (const pair of parsed.query.split('&')) {
      const eq = pair.indexOf('=');
      merged.set(eq >= 0 ? pair.slice(0, eq) : pair, eq >= 0 ? phpUrldecode(pair.slice(eq + 1)) : '');
    }
  }
  for (const [key, value] of params) {
    if (!phpEmpty(key)) merged.set(key, value);
  }
  // parse_url's false becomes an array holding just the query: the endpoint is lost
  return httpBuildUrl({ ...(parsed === false ? {} : parsed), query: phpHttpBuildQuery(merged) });
}

/** php-utils `httpBuildUrl`: scheme, credentials, host and port only when scheme and host are both non-empty. */
function httpBuildUrl(url: PhpUrl): string {
  let out = '';
  if (!phpEmpty(url.scheme) && !phpEmpty(url.host)) {
    out = `${url.scheme}://`;
    if (url.user !== undefined) out += `${url.user}${url.pass !== undefined ? `:${url.pass}` : ''}@`;
    out += url.host;
    if (url.port !== undefined) out += `:${url.port}`;
  }
  out += url.path ?? '';
  if (url.query !== undefined) out += `?${url.query}`;
  if (url.fragment !== undefined) out += `#${url.fragment}`;
  return out;
}
