import { UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { isJsonObject, isScalar, type JsonObject, type JsonValue } from '../../json/index.js';
import {
  getDataFromPath,
  PHP_FUNCTIONS,
  phpBool,
  phpEmpty,
  phpFilterValidateInt,
  phpIntCast,
  phpIsNumeric,
  phpToString,
  toPhpArrayMap,
} from '../../php/index.js';
import type { ApiSettings } from '../config/api-settings.js';
import { parseJob, type JobConfig } from '../config/job-config.js';
import {
  evaluateParams,
  flattenContext,
  type FunctionContexts,
  type UserFunctions,
} from '../functions/user-functions.js';
import { buildHttpRequest } from '../http/request-builder.js';
import type { HttpRequest, HttpResponse, Send } from '../http/types.js';
import { bodySnippet, decodeResponse } from '../response/decode-response.js';
import type { AuthMethod, AuthRuntime, SecretSink } from './auth-method.js';
import { AUTH_PATH, functionMap, registerComputed, registerSecret } from './config-values.js';
import { mergeQueries } from './query-merge.js';
import { checkQueryValues, headerValue, splitUrl, withHeader, withQuery } from './request-parts.js';

export interface LoginDependencies {
  api: ApiSettings;
  functions: UserFunctions;
  /** flattened config attributes (the `attr` context of `apiRequest`) */
  attr: Map<string, JsonValue>;
  logger: Logger;
  secrets: SecretSink;
  runtime: AuthRuntime;
}

/**
 * `login` (and, with other login-request contexts, `oauth20.login`) — GE Authentication\Login.
 *
 * Right before the first API request of the client (one client per configuration / iteration) a
 * login request is sent through the same client (client headers, base URL, retries) but without
 * `defaultOptions` and without this auth itself. From its response (`json`: an object, a scalar
 * becomes `{"data": …}`; `text`: `{"data": body}`) the `apiRequest.headers` / `apiRequest.query`
 * values are evaluated (contexts `response`, flattened, and `attr`), and each result is then also
 * tried as a `.`-path into the response. Every request gets those headers (replacing) and query
 * parameters (merged into arrays on duplicate keys, docs/ge-behaviour.md#auth-query-rewriting). With `expires` the login is repeated
 * before a request once `now > expiry` (whole seconds; `-1` means before every request).
 */
export class LoginAuth implements AuthMethod {
  private readonly format: 'json' | 'text';
  private readonly loginJob: JobConfig;
  private readonly apiRequest: JsonObject;
  private loggedIn = false;
  private logins = 0;
  private expiration: number | null = null;
  private signatureQuery: JsonObject = new Map();
  private signatureHeaders = new Map<string, string>();
  private pending: Promise<void> | null = null;

  constructor(
    readonly type: string,
    private readonly authentication: JsonObject,
    /** contexts of the login request's params and headers: `attr` (login) or `consumer`, `user`, `attr` (oauth20.login) */
    private readonly loginContexts: FunctionContexts,
    private readonly deps: LoginDependencies,
  ) {
    const format = authentication.get('format');
    if (phpEmpty(format)) this.format = 'json';
    else if (format === 'json' || format === 'text') this.format = format;
    else
      throw new UserError(
        'GEX_CONFIG_INVALID',
        `'format' must be either 'json' or 'text': set ${AUTH_PATH}.format (got ${JSON.stringify(phpToString(format))}).`,
      );

    const loginRequest = authentication.get('loginRequest');
    if (phpEmpty(loginRequest) || !isJsonObject(loginRequest)) {
      throw new UserError(
        'GEX_CONFIG_INVALID',
        `'loginRequest' is not configured for Login authentication: set ${AUTH_PATH}.loginRequest to {"endpoint": "...", "method": "...", "params": {...}, "headers": {...}}.`,
      );
    }
    if (phpEmpty(loginRequest.get('endpoint'))) {
      throw new UserError(
        'GEX_CONFIG_INVALID',
        `Request endpoint must be set for the Login authentication method: set ${AUTH_PATH}.loginRequest.endpoint.`,
      );
    }
    this.loginJob = parseJob(loginRequest, `${AUTH_PATH}.loginRequest`);

    const expires = authentication.get('expires');
    const expiresResponse =
      isJsonObject(expires) || Array.isArray(expires) ? toPhpArrayMap(expires).get('response') : undefined;
    if (!phpEmpty(expires) && !phpFilterValidateInt(expires) && phpEmpty(expiresResponse)) {
      throw new UserError(
        'GEX_CONFIG_INVALID',
        "The 'expires' attribute must be either an integer or an array with 'response' key containing a path in the response " +
          `(${AUTH_PATH}.expires: seconds, e.g. 3600, or {"response": "path.to.expiry", "relative": false}).`,
      );
    }

    const apiRequest = authentication.get('apiRequest');
    this.apiRequest = functionMap(apiRequest, `${AUTH_PATH}.apiRequest`);
  }

  async beforeRequest(request: HttpRequest, send: Send): Promise<HttpRequest> {
    if (!this.isLoggedIn()) {
      // one login even when several requests wait for it
      this.pending ??= this.logIn(send).finally(() => {
        this.pending = null;
      });
      await this.pending;
    }
    return this.sign(request);
  }

  private isLoggedIn(): boolean {
    if (!this.loggedIn) return false;
    // GE: `$this->expiration && time() > $this->expiration` (an expiry of 0 never expires)
    return !(this.expiration && this.deps.runtime.now() > this.expiration);
  }

  private sign(request: HttpRequest): HttpRequest {
    let signed = withQuery(request, mergeQueries(splitUrl(request.url).query, this.signatureQuery, true));
    for (const [name, value] of this.signatureHeaders) signed = withHeader(signed, name, value);
    return signed;
  }

  private async logIn(send: Send): Promise<void> {
    const request = this.loginRequest();
    const response = await send(request);
    const loginResponse = this.responseObject(response, request);
    this.processResponse(loginResponse);
    this.loggedIn = true;
    this.logins++;
    const expiry = this.expiration ? `; valid until ${new Date(this.expiration * 1000).toISOString()}` : '';
    // the login URL without its query, which may carry credentials
    const { origin, path } = splitUrl(request.url);
    const message = `Logged in (${this.type} authentication, ${request.method} ${origin}${path})${expiry}`;
    if (this.logins === 1) this.deps.logger.info(message);
    else this.deps.logger.debug(message);
  }

  /** The login request: built like a job request, but without `defaultOptions` (docs/ge-behaviour.md#authentication). */
  private loginRequest(): HttpRequest {
    const { functions, api } = this.deps;
    const job = this.loginJob;
    const params = evaluateParams(job.params, functions, this.loginContexts);
    const headers = evaluateParams(job.headers, functions, this.loginContexts);
    // credentials built by functions (e.g. base64 of user:password) are hidden like the secrets they hold
    registerComputed(this.deps.secrets, job.params, params);
    registerComputed(this.deps.secrets, job.headers, headers);
    return buildHttpRequest({ endpoint: job.endpoint, params, method: job.method }, headers, {
      ...api,
      defaultParams: new Map(),
      defaultHeaders: new Map(),
    });
  }

  /** The login response as an object: `text` → `{data: body}`, JSON scalar → `{data: value}`, list → error. */
  private responseObject(response: HttpResponse, request: HttpRequest): JsonObject {
    if (response.status >= 400) {
      const body = bodySnippet(response.body, this.deps.secrets.mask?.bind(this.deps.secrets), 200);
      throw new UserError(
        'GEX_API_LOGIN_FAILED',
        `The login request failed: [${response.status}] ${response.statusMessage} (${request.method} ${request.url})${body}`,
      );
    }
    if (this.format === 'text') return new Map([['data', response.body.toString('utf8')]]);
    const decoded = decodeResponse(response, request, [], this.deps.secrets.mask?.bind(this.deps.secrets));
    if (isJsonObject(decoded)) return decoded;
    if (decoded !== null && isScalar(decoded)) return new Map([['data', decoded]]);
    throw new UserError(
      'GEX_API_LOGIN_FAILED',
      `The response to the login request should be an object or a scalar value, given "${decoded === null ? 'NULL' : 'array'}" (${request.method} ${request.url}).`,
    );
  }

  private processResponse(response: JsonObject): void {
    const query = this.apiRequestValues('query', response);
    this.signatureQuery = checkQueryValues(query, `${AUTH_PATH}.apiRequest.query`);
    const headers = new Map<string, string>();
    for (const [name, value] of this.apiRequestValues('headers', response)) {
      headers.set(name, headerValue(value, `${AUTH_PATH}.apiRequest.headers.${name}`));
    }
    this.signatureHeaders = headers;
    this.expiration = this.expirationFrom(response);
  }

  /**
   * `apiRequest.<section>`: functions evaluated with `response` and `attr`, then every value tried
   * as a path into the response (GE keeps the value when the path does not exist). Values that did
   * not come literally from the configuration are credentials: they are registered as secrets.
   */
  private apiRequestValues(section: 'query' | 'headers', response: JsonObject): JsonObject {
    const { functions, attr, secrets } = this.deps;
    const configured = functionMap(this.apiRequest.get(section), `${AUTH_PATH}.apiRequest.${section}`);
    const result = evaluateParams(configured, functions, { response: flattenContext(response), attr });
    for (const [key, value] of result) {
      const found = responsePath(value, response);
      const final = found === undefined ? value : found;
      result.set(key, final);
      if (found !== undefined || isJsonObject(configured.get(key))) registerSecret(secrets, final);
    }
    return result;
  }

  /** GE `getExpirationFromResponse`: unix seconds, or null for "never expires". */
  private expirationFrom(response: JsonObject): number | null {
    const expires = this.authentication.get('expires');
    const now = this.deps.runtime.now();
    if (expires === undefined || expires === null) return null;
    if (phpIsNumeric(expires)) return now + phpIntCast(expires);
    if (!isJsonObject(expires) && !Array.isArray(expires)) return null;
    const options = toPhpArrayMap(expires);
    const path = options.get('response');
    if (phpEmpty(path)) return null;
    const raw = getDataFromPath(response, phpToString(path)) ?? null;
    let expiry: number | false;
    if ((typeof raw === 'number' && Number.isInteger(raw)) || typeof raw === 'bigint') expiry = Number(raw);
    else {
      const parsed = raw === null || isScalar(raw) ? PHP_FUNCTIONS.strtotime([phpToString(raw), now]) : false;
      expiry = typeof parsed === 'number' ? parsed : false;
    }
    if (phpBool(options.get('relative'))) expiry = (expiry === false ? 0 : expiry) + now;
    if (expiry === false || expiry < now) {
      throw new UserError(
        'GEX_API_LOGIN_FAILED',
        `Login authentication returned expiry time before current time: '${raw === null || isScalar(raw) ? phpToString(raw) : 'Object'}' ` +
          `(path ${phpToString(path)} of the login response).`,
      );
    }
    return expiry;
  }
}

/**
 * php-utils `getDataFromPath($value, $response, '.', false)` as the login applies it to every
 * apiRequest value: an empty path or "." is the whole response, a missing path is undefined.
 */
function responsePath(value: JsonValue, response: JsonObject): JsonValue | undefined {
  if (value !== null && !isScalar(value)) return undefined;
  if (phpEmpty(value)) return response;
  const path = phpToString(value);
  if (path === '.') return response;
  return getDataFromPath(response, path);
}
