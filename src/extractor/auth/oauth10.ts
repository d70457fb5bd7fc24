import { createHmac } from 'node:crypto';
import { UserError } from '../../common/errors.js';
import { decodeJson, isJsonObject, JsonSyntaxError, type JsonObject, type JsonValue } from '../../json/index.js';
import {
  guzzleQueryParse,
  phpEmpty,
  percentDecode,
  phpRawUrlencode,
  phpToString,
  phpHttpBuildQuery,
  phpStrcmp,
  type GuzzleQueryValue,
} from '../../php/index.js';
import type { HttpRequest } from '../http/types.js';
import type { AuthMethod, AuthRuntime, SecretSink } from './auth-method.js';
import { CREDENTIALS_PATH, oauthCredentials, registerSecret } from './config-values.js';
import { splitUrl, withHeader } from './request-parts.js';

export interface OAuth1Credentials {
  consumerKey: string;
  consumerSecret: string;
  token: string;
  tokenSecret: string;
}

/** Byte-wise key order (PHP `uksort($a, 'strcmp')`). */
function byKey<V>(entries: Iterable<[string, V]>): Array<[string, V]> {
  return [...entries].sort(([a], [b]) => phpStrcmp(a, b));
}

/**
 * The OAuth 1.0 HMAC-SHA1 `Authorization` header guzzlehttp/oauth-subscriber 0.4 computes
 * (docs/ge-behaviour.md#authentication). Signature base string: `METHOD&enc(url without query)&enc(params)`, the
 * params being the oauth ones, then (for a form body) the body's, then the query's — a key already
 * present is not added again (PHP `+=`) — sorted by name, nulls dropped, serialised with
 * `http_build_query` in RFC 3986 mode. Key: `enc(consumer secret)&enc(token secret)`.
 */
export function oauth1Header(
  request: HttpRequest,
  credentials: OAuth1Credentials,
  nonce: string,
  timestamp: number,
): string {
  const oauth = new Map<string, JsonValue>([
    ['oauth_consumer_key', credentials.consumerKey],
    ['oauth_nonce', nonce],
    ['oauth_signature_method', 'HMAC-SHA1'],
    ['oauth_timestamp', timestamp],
    ['oauth_token', credentials.token],
    ['oauth_version', '1.0'],
  ]);
  const { origin, path, query } = splitUrl(request.url);
  const params = new Map<string, JsonValue | GuzzleQueryValue>(oauth);
  const addMissing = (more: Map<string, GuzzleQueryValue>) => {
    for (const [k, v] of more) if (!params.has(k)) params.set(k, v);
  };
  const contentType = request.headers
    .filter(([n]) => n.toLowerCase() === 'content-type')
    .map(([, v]) => v)
    .join(', ');
  if (contentType === 'application/x-www-form-urlencoded') addMissing(guzzleQueryParse(request.body ?? ''));
  addMissing(guzzleQueryParse(query));
  const signed = new Map(byKey(params).filter(([, v]) => v !== null)) as JsonObject;
  const baseString = `${request.method.toUpperCase()}&${phpRawUrlencode(origin + path)}&${phpRawUrlencode(phpHttpBuildQuery(signed, 'RFC3986'))}`;
  const key = `${phpRawUrlencode(credentials.consumerSecret)}&${phpRawUrlencode(credentials.tokenSecret)}`;
  oauth.set('oauth_signature', createHmac('sha1', key).update(baseString).digest('base64'));
  return `OAuth ${byKey(oauth)
    .map(([k, v]) => `${k}="${phpRawUrlencode(phpToString(v))}"`)
    .join(', ')}`;
}

/**
 * `oauth10`: every request signed with OAuth 1.0a HMAC-SHA1. Credentials from
 * `authorization.oauth_api.credentials`: `appKey` (consumer key), `#appSecret` (consumer secret)
 * and `#data`, a JSON object with `oauth_token` and `oauth_token_secret`.
 */
export class OAuth10Auth implements AuthMethod {
  readonly type = 'oauth10';
  private readonly credentials: OAuth1Credentials;

  constructor(
    authorization: JsonObject,
    private readonly runtime: AuthRuntime,
    private readonly secrets: SecretSink,
  ) {
    const details = oauthCredentials(authorization, 'OAuth 1.0');
    const rawData = details.get('#data');
    let data: JsonValue;
    try {
      data = typeof rawData === 'string' ? decodeJson(rawData) : (rawData as JsonValue);
    } catch (error) {
      if (!(error instanceof JsonSyntaxError)) throw error;
      throw new UserError(
        'GEX_CONFIG_INVALID',
        `The OAuth data is not a valid JSON: ${CREDENTIALS_PATH}.#data must be a JSON object with "oauth_token" and "oauth_token_secret" (${error.message}).`,
      );
    }
    if (!isJsonObject(data)) {
      throw new UserError(
        'GEX_CONFIG_INVALID',
        `The OAuth data must be a JSON object: ${CREDENTIALS_PATH}.#data needs "oauth_token" and "oauth_token_secret".`,
      );
    }
    for (const key of ['oauth_token', 'oauth_token_secret']) {
      if (phpEmpty(data.get(key)))
        throw new UserError(
          'GEX_CONFIG_INVALID',
          `Missing '${key}' in ${CREDENTIALS_PATH}.#data for OAuth 1.0 authorization.`,
        );
    }
    this.credentials = {
      consumerKey: phpToString(details.get('appKey')),
      consumerSecret: phpToString(details.get('#appSecret')),
      token: phpToString(data.get('oauth_token')),
      tokenSecret: phpToString(data.get('oauth_token_secret')),
    };
    registerSecret(secrets, this.credentials.token);
    registerSecret(secrets, this.credentials.tokenSecret);
    registerSecret(secrets, this.credentials.consumerSecret);
  }

  async beforeRequest(request: HttpRequest): Promise<HttpRequest> {
    // oauth-subscriber: nonce = sha1(uniqid() . host . path), 40 hex characters
    const header = oauth1Header(request, this.credentials, this.runtime.nonce(40), this.runtime.now());
    // the signature is a credential for this request (replayable until its timestamp expires)
    const signature = /oauth_signature="([^"]*)"/.exec(header)?.[1];
    if (signature) {
      const add = (value: string) => (this.secrets.addRecent ? this.secrets.addRecent(value) : this.secrets.add(value));
      add(percentDecode(signature));
    }
    return withHeader(request, 'Authorization', header);
  }
}
