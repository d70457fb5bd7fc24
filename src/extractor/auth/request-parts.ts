import { ConfigError } from '../../common/errors.js';
import { isJsonObject, isScalar, type JsonObject, type JsonValue } from '../../json/index.js';
import { phpToString } from '../../php/index.js';
import { headerText } from '../http/header-text.js';
import type { HttpRequest } from '../http/types.js';

/** The parts of an absolute request URL (as Guzzle normalised it: no fragment, no default port). */
export interface UrlParts {
  /** `scheme://authority` */
  origin: string;
  scheme: string;
  /** lower-case host, IPv6 in brackets (psr7 `getHost()`) */
  host: string;
  /** the explicit port, or null */
  port: number | null;
  path: string;
  /** the query without `?` ("" when there is none) */
  query: string;
}

const URL_PATTERN = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?/s;

export function splitUrl(url: string): UrlParts {
  const m = URL_PATTERN.exec(url);
  if (!m) throw new Error(`not an absolute URL: ${url}`);
  const authority = m[2];
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  const portMatch = /:(\d*)$/.exec(hostPort);
  const host = portMatch && !hostPort.endsWith(']') ? hostPort.slice(0, portMatch.index) : hostPort;
  const port = portMatch && portMatch[1] !== '' ? Number(portMatch[1]) : null;
  return {
    origin: `${m[1]}://${authority}`,
    scheme: m[1].toLowerCase(),
    host: host.toLowerCase(),
    port,
    path: m[3],
    query: m[4] ?? '',
  };
}

/** The request with another query string (psr7 `Uri::withQuery`; an empty query drops the `?`). */
export function withQuery(request: HttpRequest, query: string): HttpRequest {
  const { origin, path } = splitUrl(request.url);
  return { ...request, url: `${origin}${path}${query === '' ? '' : `?${query}`}` };
}

/** The request with a header set, replacing any of that name in any case (psr7 `withHeader`). */
export function withHeader(request: HttpRequest, name: string, value: string): HttpRequest {
  const lower = name.toLowerCase();
  return { ...request, headers: [...request.headers.filter(([n]) => n.toLowerCase() !== lower), [name, value]] };
}

/**
 * The `request` context of auth functions (GE RequestContext): url, path, queryString, method,
 * hostname, port (explicit, else 80/443 by scheme) and resource (path + `?query`).
 */
export function requestContext(request: HttpRequest): JsonObject {
  const parts = splitUrl(request.url);
  const port = parts.port ?? (parts.scheme === 'http' ? 80 : parts.scheme === 'https' ? 443 : null);
  return new Map<string, JsonValue>([
    ['url', request.url],
    ['path', parts.path],
    ['queryString', parts.query],
    ['method', request.method],
    ['hostname', parts.host],
    ['port', port],
    ['resource', parts.path + (parts.query === '' ? '' : `?${parts.query}`)],
  ]);
}

function typeName(value: JsonValue): string {
  return Array.isArray(value) ? 'array' : isJsonObject(value) ? 'object' : typeof value;
}

/** A header value an auth method produced: scalars as PHP prints them, anything else a user error (docs/ge-behaviour.md#headers). */
export function headerValue(value: JsonValue, path: string): string {
  if (value !== null && !isScalar(value)) {
    throw new ConfigError(
      path,
      `invalid type "${typeName(value)}" in headers`,
      'A header value must be a string or a number; check the function or the response path that produces it',
    );
  }
  return headerText(phpToString(value), path);
}

/** Query values an auth method produced: scalars, or lists/objects of scalars (the key repeats). */
export function checkQueryValues(query: JsonObject, path: string): JsonObject {
  for (const [key, value] of query) {
    const items = Array.isArray(value) ? value : isJsonObject(value) ? [...value.values()] : [value];
    for (const item of items) {
      if (item !== null && !isScalar(item)) {
        throw new ConfigError(
          `${path}.${key}`,
          `invalid type "${typeName(item)}" in query`,
          'A query value must be a string, a number or a list of them',
        );
      }
    }
  }
  return query;
}
