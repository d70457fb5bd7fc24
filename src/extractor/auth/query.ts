import type { JsonObject, JsonValue } from '../../json/index.js';
import { guzzleQueryParse } from '../../php/index.js';
import { evaluateParams, flattenContext, type UserFunctions } from '../functions/user-functions.js';
import type { HttpRequest } from '../http/types.js';
import type { AuthMethod, SecretSink } from './auth-method.js';
import { AUTH_PATH, registerComputed } from './config-values.js';
import { mergeQueries } from './query-merge.js';
import { checkQueryValues, requestContext, splitUrl, withQuery } from './request-parts.js';

/**
 * `query` (alias `url.query`): `authentication.query` evaluated per request with the contexts
 * `query` (the request's current query, Guzzle-parsed), `request` (url, path, queryString, method,
 * hostname, port, resource) and `attr`, then merged into the URL — same key replaced in place, new
 * keys appended, everything re-encoded in RFC 3986 (docs/ge-behaviour.md#auth-query-rewriting).
 */
export class QueryAuth implements AuthMethod {
  constructor(
    readonly type: string,
    private readonly query: JsonObject,
    private readonly functions: UserFunctions,
    private readonly attr: Map<string, JsonValue>,
    private readonly secrets: SecretSink,
  ) {}

  async beforeRequest(request: HttpRequest): Promise<HttpRequest> {
    const current = splitUrl(request.url).query;
    const contexts = {
      query: flattenContext(guzzleQueryParse(current)),
      request: flattenContext(requestContext(request)),
      attr: this.attr,
    };
    const authQuery = checkQueryValues(evaluateParams(this.query, this.functions, contexts), `${AUTH_PATH}.query`);
    registerComputed(this.secrets, this.query, authQuery);
    return withQuery(request, mergeQueries(current, authQuery));
  }
}
