import { ConfigError, UserError } from '../../common/errors.js';
import { isJsonObject, isScalar, type JsonObject, type JsonValue } from '../../json/index.js';
import { phpEmpty, phpToString, toPhpArrayMap } from '../../php/index.js';
import type { SecretSink } from './auth-method.js';

export const AUTH_PATH = 'parameters.api.authentication';
export const CREDENTIALS_PATH = 'authorization.oauth_api.credentials';

/**
 * A name → value section of the authentication config (`query`, `headers`, `apiRequest.*`):
 * PHP-empty is `{}`, a list is a PHP array with index keys, a scalar is an error (GE's
 * UserFunction::build refuses it). GE evaluates such a section like job params (`evaluateParams`):
 * top-level object values are functions or references, the rest is kept.
 */
export function functionMap(value: JsonValue | undefined, path: string): JsonObject {
  if (phpEmpty(value)) return new Map();
  if (isJsonObject(value) || Array.isArray(value)) return toPhpArrayMap(value);
  throw new ConfigError(
    path,
    `must be an object, got ${JSON.stringify(phpToString(value))}`,
    'Use {"name": value-or-function, ...}',
  );
}

/** `authorization.oauth_api.credentials`, or a user error saying what to set. */
export function oauthCredentials(authorization: JsonObject, method: string): JsonObject {
  const oauthApi = authorization.get('oauth_api');
  const credentials = isJsonObject(oauthApi) ? oauthApi.get('credentials') : undefined;
  if (!isJsonObject(credentials) || phpEmpty(credentials)) {
    throw new UserError(
      'GEX_CONFIG_INVALID',
      `OAuth API credentials not supplied in configuration: ${method} authentication needs ${CREDENTIALS_PATH} with "appKey", "#appSecret" and "#data" ` +
        "(Keboola fills it from the component's OAuth authorization).",
    );
  }
  for (const key of ['#data', 'appKey', '#appSecret']) {
    if (phpEmpty(credentials.get(key))) {
      throw new UserError(
        'GEX_CONFIG_INVALID',
        `Missing '${key}' for ${method} authorization: set ${CREDENTIALS_PATH}.${key}.`,
      );
    }
  }
  return credentials;
}

/** Shorter values are not treated as secrets: hiding them would garble every log line. */
export const MIN_SECRET_LENGTH = 4;

/**
 * Registers a credential obtained at run time with the log masker (which hides every encoded form
 * of it: query strings, form bodies, JSON, base64).
 */
export function registerSecret(sink: SecretSink, value: JsonValue | undefined): void {
  if (value === undefined || value === null || !isScalar(value) || typeof value === 'boolean') return;
  const text = phpToString(value);
  if (text.length < MIN_SECRET_LENGTH) return;
  sink.add(text);
}

/** Values shorter than this that an auth computes per request are not hidden (see addRecent). */
const MIN_COMPUTED_LENGTH = 8;

/**
 * Registers the values an auth method computed with functions (a signature, a header built from
 * a secret, a base64 of `user:password`): valid for a request or a login, so they are remembered
 * as recent values. Literal values of the configuration are not secrets and are not registered.
 */
export function registerComputed(sink: SecretSink, configured: JsonObject, evaluated: JsonObject): void {
  for (const [key, value] of evaluated) {
    if (!isJsonObject(configured.get(key))) continue;
    const items = Array.isArray(value) ? value : isJsonObject(value) ? [...value.values()] : [value];
    for (const item of items) {
      if (item === null || !isScalar(item) || typeof item === 'boolean') continue;
      const text = phpToString(item);
      if (text.length < MIN_COMPUTED_LENGTH) continue;
      if (sink.addRecent) sink.addRecent(text);
      else sink.add(text);
    }
  }
}

/** Registers every string leaf of a decoded credentials document (tokens, refresh tokens, secrets). */
export function registerStringLeaves(sink: SecretSink, value: JsonValue | undefined): void {
  if (typeof value === 'string') registerSecret(sink, value);
  else if (Array.isArray(value)) for (const v of value) registerStringLeaves(sink, v);
  else if (isJsonObject(value)) for (const v of value.values()) registerStringLeaves(sink, v);
}
