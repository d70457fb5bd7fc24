import { ConfigError, UserError } from '../../common/errors.js';
import { isScalar, type JsonObject, type JsonValue } from '../../json/index.js';
import {
  arrayReplaceRecursive,
  buildUrl,
  findNonFiniteFloat,
  hasRawBytes,
  phpHttpBuildQuery,
  phpJsonEncode,
  phpToString,
  resolveGuzzleUrl,
  UnparsableUriError,
} from '../../php/index.js';
import type { ApiSettings } from '../config/api-settings.js';
import type { PageRequest } from '../pagination/paginator.js';
import { headerName, headerText } from './header-text.js';
import type { HttpRequest } from './types.js';

export const USER_AGENT = 'gex/0.1 (Generic Extractor compatible)';

function headerValue(value: JsonValue, path: string): string {
  if (value !== null && !isScalar(value)) {
    throw new ConfigError(
      path,
      `invalid type "${Array.isArray(value) ? 'array' : 'object'}" in headers`,
      'Header values must be strings or numbers',
    );
  }
  return headerText(phpToString(value), path);
}

function hasHeader(headers: Array<[string, string]>, name: string): boolean {
  const lower = name.toLowerCase();
  return headers.some(([n]) => n.toLowerCase() === lower);
}

function setHeader(headers: Array<[string, string]>, name: string, value: string): void {
  const lower = name.toLowerCase();
  const kept = headers.filter(([n]) => n.toLowerCase() !== lower);
  headers.length = 0;
  headers.push(...kept, [name, value]);
}

/**
 * A JSON body cannot carry bytes that are not UTF-8 (a raw digest): GE's JSON encoding fails on
 * them, so the run stops before sending rather than sending altered bytes.
 */
function refuseRawBytes(value: JsonValue, path = 'params'): void {
  if (typeof value === 'string') {
    if (hasRawBytes(value)) {
      throw new UserError(
        'GEX_API_REQUEST_UNENCODABLE',
        `The POST body cannot be encoded as JSON: ${path} holds raw bytes that are not UTF-8 text (e.g. a digest made with raw output). Encode them first, e.g. with base64_encode.`,
      );
    }
  } else if (Array.isArray(value)) value.forEach((v, i) => refuseRawBytes(v, `${path}.${i}`));
  else if (value instanceof Map) for (const [k, v] of value) refuseRawBytes(v, `${path}.${k}`);
}

/**
 * JSON has no INF or NAN: GE's JSON encoding fails on them. Config values are refused when the
 * configuration is read; this catches one taken from a response (e.g. a cursor of 1e400).
 */
function refuseNonFinite(params: JsonObject): void {
  const at = findNonFiniteFloat(params);
  if (at !== null)
    throw new UserError(
      'GEX_API_REQUEST_UNENCODABLE',
      `The POST body cannot be encoded as JSON: params${at.map((k) => `.${k}`).join('')} is INF or NAN (a number beyond the float range), which JSON cannot hold.`,
    );
}

/**
 * Turns a job's page request into the HTTP request GE would send (docs/ge-behaviour.md#requests):
 * `defaultOptions` merged under the job's params and headers, GET params in the query string
 * (PHP `http_build_query`), POST as a PHP-encoded JSON body, FORM as a form body, the target
 * resolved against `baseUrl` like Guzzle, and client headers added where the request has none.
 */
export function buildHttpRequest(page: PageRequest, jobHeaders: JsonObject, api: ApiSettings): HttpRequest {
  // GE keeps a job's nested param objects as PHP objects: they replace a default whole (lists merge by index)
  const params = arrayReplaceRecursive(api.defaultParams, page.params, {
    replacementObjectsOpaque: true,
  }) as JsonObject;
  const made = jobHeadersOf(jobHeaders, api);
  let headers: Array<[string, string]>;
  let target = page.endpoint;
  let body: string | undefined;
  if (page.method === 'GET') {
    target = buildUrl(page.endpoint, params);
    headers = [...made.get];
  } else {
    headers = [...made.own];
    if (page.method === 'POST') {
      refuseRawBytes(params);
      refuseNonFinite(params);
      // GE's JSON parser has set serialize_precision to 17 before the first request: 0.1 is sent as 0.10000000000000001
      body = phpJsonEncode(params, { objectsAreArrays: true, floatPrecision: 17 });
      setHeader(headers, 'Content-Type', 'application/json');
    } else {
      body = phpHttpBuildQuery(params);
      setHeader(headers, 'Content-Type', 'application/x-www-form-urlencoded');
    }
    addClientHeaders(headers, api);
  }
  let url: string;
  try {
    url = resolveGuzzleUrl(api.baseUrl, target);
  } catch (error) {
    throw error instanceof UnparsableUriError ? new UserError('GEX_API_REQUEST_UNENCODABLE', error.message) : error;
  }
  return {
    method: page.method === 'GET' ? 'GET' : 'POST',
    url,
    headers,
    body,
  };
}

interface JobHeaders {
  api: ApiSettings;
  /** `defaultHeaders` under the job's own */
  own: ReadonlyArray<[string, string]>;
  /** what a GET sends: its own headers, then the client's it lacks */
  get: ReadonlyArray<[string, string]>;
}

/** A job's headers, made once per job and API: every page of it sends the same. */
const madeHeaders = new WeakMap<JsonObject, JobHeaders>();

function jobHeadersOf(jobHeaders: JsonObject, api: ApiSettings): JobHeaders {
  const made = madeHeaders.get(jobHeaders);
  if (made?.api === api) return made;
  const merged = arrayReplaceRecursive(api.defaultHeaders, jobHeaders) as JsonObject;
  const own: Array<[string, string]> = [];
  for (const [name, value] of merged)
    own.push([headerName(name, `headers.${name}`), headerValue(value, `headers.${name}`)]);
  const get = [...own];
  addClientHeaders(get, api);
  const headers = { api, own, get };
  madeHeaders.set(jobHeaders, headers);
  return headers;
}

/**
 * Guzzle adds a client header when the request lacks it, checked against the request's own
 * headers only (its Content-Type included): client headers differing in case only (`Name`,
 * `name`) are all sent. Then its User-Agent, if none was given.
 */
function addClientHeaders(headers: Array<[string, string]>, api: ApiSettings): void {
  const requestHas = new Set(headers.map(([n]) => n.toLowerCase()));
  for (const [name, value] of api.clientHeaders) {
    if (requestHas.has(name.toLowerCase())) continue;
    const at = `parameters.api.http.headers.${name}`;
    headers.push([headerName(name, at), headerValue(value, at)]);
  }
  if (!hasHeader(headers, 'User-Agent')) headers.push(['User-Agent', USER_AGENT]);
}
