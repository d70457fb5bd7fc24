import { ConfigError, UserError } from '../../common/errors.js';
import { decodeJson, isJsonObject, type JsonObject, type JsonValue } from '../../json/index.js';
import { isNumericString, phpEmpty, phpIntCast, phpToString, toPhpArrayMap } from '../../php/index.js';

export interface RetrySettings {
  maxRetries: number;
  retryHeader: string;
  httpCodes: number[];
  curlCodes: number[];
  /** longest wait a Retry-After header may impose before we give up (GE has no ceiling) */
  maxRetryWaitMs: number;
  /** first exponential backoff delay; doubles per retry (GE: 1 s) */
  backoffBaseMs: number;
}

/** `parameters.api` resolved for one configuration (iteration). */
export interface ApiSettings {
  baseUrl: string;
  name: string;
  pagination: JsonValue | undefined;
  /** client default headers: `api.http.headers` overlaid by `config.http.headers` */
  clientHeaders: JsonObject;
  /** `api.http.defaultOptions` merged under every job request */
  defaultParams: JsonObject;
  defaultHeaders: JsonObject;
  ignoreErrors: number[];
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  retry: RetrySettings;
  /** pages fetched in parallel at most (`api.pagination.concurrency`, gex's addition; 1 = as GE) */
  concurrency: number;
  /** requests per second at most over the whole run (`api.http.maxRequestsPerSecond`, gex's addition); undefined = no limit, as GE */
  maxRequestsPerSecond?: number;
  /** PEM of the CA that signs the API's certificate (`api.caCertificate`) */
  caCertificate?: string;
  /** PEM with the client certificate and its key (`api.#clientCertificate`) */
  clientCertificate?: string;
}

export const DEFAULT_RETRY: RetrySettings = {
  maxRetries: 10,
  retryHeader: 'Retry-After',
  httpCodes: [500, 502, 503, 504, 408, 420, 429],
  curlCodes: [28, 6, 7, 35, 52, 56],
  maxRetryWaitMs: 600_000,
  backoffBaseMs: 1000,
};

function objectOf(value: JsonValue | undefined, path: string): JsonObject {
  if (phpEmpty(value)) return new Map();
  if (isJsonObject(value) || Array.isArray(value)) return toPhpArrayMap(value);
  throw new ConfigError(path, 'must be an object');
}

function integerList(value: JsonValue | undefined, fallback: number[]): number[] {
  if (!Array.isArray(value)) return fallback;
  // GE compares codes strictly as integers: "500" never matches
  return value.filter((v): v is number => typeof v === 'number');
}

/** A number of seconds from configuration, in milliseconds; `fallbackMs` when absent or not positive. */
function seconds(value: JsonValue | undefined, fallbackMs: number, zeroAllowed = false): number {
  if (value === undefined || value === null || value === '') return fallbackMs;
  const text = phpToString(value);
  const n = isNumericString(text) ? Number(text) : NaN;
  return Number.isFinite(n) && (n > 0 || (zeroAllowed && n === 0)) ? n * 1000 : fallbackMs;
}

export function parseRetrySettings(value: JsonValue | undefined, path: string): RetrySettings {
  const retry = objectOf(value, path);
  const http = objectOf(retry.get('http'), `${path}.http`);
  const curl = objectOf(retry.get('curl'), `${path}.curl`);
  const maxRetries = retry.get('maxRetries');
  const maxWait = retry.get('maxRetryWait');
  const backoff = retry.get('backoffBase');
  return {
    maxRetries:
      maxRetries === undefined || maxRetries === null ? DEFAULT_RETRY.maxRetries : Math.max(0, phpIntCast(maxRetries)),
    retryHeader: phpToString(http.get('retryHeader') ?? retry.get('headerName')) || DEFAULT_RETRY.retryHeader,
    httpCodes: integerList(http.get('codes') ?? retry.get('httpCodes'), DEFAULT_RETRY.httpCodes),
    curlCodes: integerList(curl.get('codes') ?? retry.get('curlCodes'), DEFAULT_RETRY.curlCodes),
    maxRetryWaitMs: seconds(maxWait, DEFAULT_RETRY.maxRetryWaitMs, true),
    backoffBaseMs: seconds(backoff, DEFAULT_RETRY.backoffBaseMs),
  };
}

/** Evaluates user functions of a value (context `attr`); identity where functions are not allowed. */
export type Evaluate = (value: JsonValue) => JsonValue;

function parseBaseUrl(value: JsonValue | undefined, evaluate: Evaluate): string {
  const path = 'parameters.api.baseUrl';
  // a function object, or (deprecated) a JSON string holding one
  let source = value;
  if (typeof value === 'string' && value.trim().startsWith('{')) {
    try {
      source = decodeJson(value);
    } catch {
      source = value;
    }
  }
  const url = phpToString(isJsonObject(source) ? evaluate(source) : source);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(
      path,
      `${JSON.stringify(url)} is not a valid URL`,
      'Use an absolute http(s) URL such as "https://api.example.com/v1/"',
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(path, `${JSON.stringify(url)} is not an http(s) URL`, 'Use an absolute http(s) URL');
  }
  return url;
}

function paginationConcurrency(pagination: JsonValue | undefined): number {
  const value = isJsonObject(pagination) ? pagination.get('concurrency') : undefined;
  return typeof value === 'number' && value >= 1 ? Math.floor(value) : 1;
}

function maxRequestsPerSecond(value: JsonValue | undefined): number | undefined {
  // the schema has refused anything else; a value that slips through means no limit, as in GE
  return typeof value === 'number' && value > 0 && Number.isFinite(value) ? value : undefined;
}

/** Builds the API settings of one configuration from `parameters.api` and `config` (attributes). */
export function buildApiSettings(api: JsonObject, config: JsonObject, evaluate: Evaluate = (v) => v): ApiSettings {
  const http = objectOf(api.get('http'), 'parameters.api.http');
  const configHttp = objectOf(config.get('http'), 'parameters.config.http');
  const configHeaders = objectOf(configHttp.get('headers'), 'parameters.config.http.headers');
  const required = http.get('requiredHeaders');
  if (Array.isArray(required)) {
    for (const name of required) {
      const header = phpToString(name);
      if (phpEmpty(configHeaders.get(header))) {
        throw new UserError(
          'GEX_CONFIG_INVALID',
          `Missing required header ${header} in 'config.http.headers'. Set parameters.config.http.headers.${header}.`,
        );
      }
    }
  }
  // headers may be user functions (context attr), evaluated once per configuration
  const clientHeaders: JsonObject = new Map();
  for (const [k, v] of objectOf(http.get('headers'), 'parameters.api.http.headers')) clientHeaders.set(k, evaluate(v));
  for (const [k, v] of configHeaders) clientHeaders.set(k, evaluate(v));
  const defaults = objectOf(http.get('defaultOptions'), 'parameters.api.http.defaultOptions');
  return {
    baseUrl: parseBaseUrl(api.get('baseUrl'), evaluate),
    name: apiName(api),
    pagination: api.get('pagination'),
    clientHeaders,
    defaultParams: objectOf(defaults.get('params'), 'parameters.api.http.defaultOptions.params'),
    defaultHeaders: objectOf(defaults.get('headers'), 'parameters.api.http.defaultOptions.headers'),
    ignoreErrors: integerList(http.get('ignoreErrors'), []),
    connectTimeoutMs: seconds(http.get('connectTimeout'), 30_000),
    requestTimeoutMs: seconds(http.get('requestTimeout'), 300_000),
    retry: parseRetrySettings(api.get('retryConfig'), 'parameters.api.retryConfig'),
    concurrency: paginationConcurrency(api.get('pagination')),
    maxRequestsPerSecond: maxRequestsPerSecond(http.get('maxRequestsPerSecond')),
    caCertificate: phpEmpty(api.get('caCertificate')) ? undefined : phpToString(api.get('caCertificate')),
    clientCertificate: phpEmpty(api.get('#clientCertificate')) ? undefined : phpToString(api.get('#clientCertificate')),
  };
}

/** `api.name` (part of the default bucket name), `generic` when empty. */
export function apiName(api: JsonObject): string {
  const name = api.get('name');
  return phpEmpty(name) ? 'generic' : phpToString(name);
}
