import { UserError } from '../../common/errors.js';
import {
  decodeJson,
  isJsonObject,
  isScalar,
  JsonSyntaxError,
  type JsonObject,
  type JsonValue,
} from '../../json/index.js';
import { guzzleQueryParse, phpEmpty, phpToString } from '../../php/index.js';
import { evaluateParams, flattenContext, type UserFunctions } from '../functions/user-functions.js';
import type { HttpRequest } from '../http/types.js';
import type { AuthMethod, AuthRuntime, SecretSink } from './auth-method.js';
import {
  AUTH_PATH,
  CREDENTIALS_PATH,
  functionMap,
  oauthCredentials,
  registerComputed,
  registerSecret,
  registerStringLeaves,
} from './config-values.js';
import { mergeQueries } from './query-merge.js';
import { checkQueryValues, headerValue, requestContext, splitUrl, withHeader, withQuery } from './request-parts.js';

/** `#data` as JSON (oauth20 `format: json`, oauth20.login), or a user error naming the field. */
export function decodeOAuthData(raw: JsonValue | undefined): JsonValue {
  if (typeof raw !== 'string') return raw ?? null;
  try {
    return decodeJson(raw);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    throw new UserError(
      'GEX_CONFIG_INVALID',
      `The OAuth data is not a valid JSON: set ${CREDENTIALS_PATH}.#data to a JSON object (${error.message}).`,
    );
  }
}

/**
 * `oauth20` — GE Authentication\OAuth20. `#data` is the token (`format: text`, the default) or a
 * JSON document (`format: json`). `authentication.headers` and `authentication.query` are evaluated
 * per request (so per retry) with the contexts `query`, `request` and `authorization` =
 * `{clientId, nonce (16 hex), timestamp, data}` — with JSON data flattened as `data.<key>`. The
 * query is merged into every request (same key replaced in place, RFC 3986 re-encoding, docs/ge-behaviour.md#auth-query-rewriting),
 * headers replace same-named ones.
 */
export class OAuth20Auth implements AuthMethod {
  readonly type = 'oauth20';
  private readonly clientId: string;
  private readonly data: JsonValue;
  private readonly headers: JsonObject;
  private readonly query: JsonObject;

  constructor(
    authorization: JsonObject,
    authentication: JsonObject,
    private readonly functions: UserFunctions,
    private readonly runtime: AuthRuntime,
    private readonly secrets: SecretSink,
  ) {
    const details = oauthCredentials(authorization, 'OAuth 2.0');
    const format = phpEmpty(authentication.get('format')) ? 'text' : authentication.get('format');
    if (format === 'json') {
      this.data = decodeOAuthData(details.get('#data'));
      registerStringLeaves(secrets, this.data);
    } else if (format === 'text') {
      this.data = phpToString(details.get('#data'));
      registerSecret(secrets, this.data);
    } else {
      throw new UserError(
        'GEX_CONFIG_INVALID',
        `Unknown OAuth data format '${phpToString(format)}': set ${AUTH_PATH}.format to "text" (the token) or "json".`,
      );
    }
    this.clientId = phpToString(details.get('appKey'));
    this.headers = functionMap(authentication.get('headers'), `${AUTH_PATH}.headers`);
    this.query = functionMap(authentication.get('query'), `${AUTH_PATH}.query`);
  }

  /** GE OAuth20Context `authorization`: clientId, nonce, timestamp, then `data` or `data.*`. */
  private authorizationContext(): Map<string, JsonValue> {
    const context = new Map<string, JsonValue>([
      ['clientId', this.clientId],
      ['nonce', this.runtime.nonce(16)],
      ['timestamp', this.runtime.now()],
    ]);
    if (this.data === null || isScalar(this.data)) context.set('data', this.data);
    else for (const [k, v] of flattenContext(this.data, 'data')) context.set(k, v);
    return context;
  }

  async beforeRequest(request: HttpRequest): Promise<HttpRequest> {
    const current = splitUrl(request.url).query;
    const contexts = {
      query: flattenContext(guzzleQueryParse(current)),
      request: flattenContext(requestContext(request)),
      authorization: this.authorizationContext(),
    };
    const query = checkQueryValues(evaluateParams(this.query, this.functions, contexts), `${AUTH_PATH}.query`);
    registerComputed(this.secrets, this.query, query);
    let signed = withQuery(request, mergeQueries(current, query));
    const headers = evaluateParams(this.headers, this.functions, contexts);
    registerComputed(this.secrets, this.headers, headers);
    for (const [name, value] of headers) {
      signed = withHeader(signed, name, headerValue(value, `${AUTH_PATH}.headers.${name}`));
    }
    return signed;
  }
}

/** oauth20.login contexts of the login request: `consumer` {client_id, client_secret} and `user` (#data decoded). */
export function oauth20LoginContexts(
  authorization: JsonObject,
  secrets: SecretSink,
): { consumer: Map<string, JsonValue>; user: Map<string, JsonValue> } {
  const details = oauthCredentials(authorization, 'OAuth 2.0');
  const user = decodeOAuthData(details.get('#data'));
  if (!isJsonObject(user) && !Array.isArray(user)) {
    throw new UserError(
      'GEX_CONFIG_INVALID',
      `The OAuth data must be a JSON object for oauth20.login: set ${CREDENTIALS_PATH}.#data to e.g. {"refresh_token": "..."}.`,
    );
  }
  registerStringLeaves(secrets, user);
  const consumer: JsonObject = new Map([
    ['client_id', details.get('appKey') ?? null],
    ['client_secret', details.get('#appSecret') ?? null],
  ]);
  return { consumer: flattenContext(consumer), user: flattenContext(user) };
}
