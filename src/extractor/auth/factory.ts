import { ConfigError, UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../json/index.js';
import { phpEmpty, phpToString } from '../../php/index.js';
import type { ApiSettings } from '../config/api-settings.js';
import type { UserFunctions } from '../functions/user-functions.js';
import { SYSTEM_RUNTIME, type AuthMethod, type AuthRuntime, type SecretSink } from './auth-method.js';
import { BasicAuth } from './basic.js';
import { AUTH_PATH, functionMap, registerSecret } from './config-values.js';
import { LoginAuth } from './login.js';
import { OAuth10Auth } from './oauth10.js';
import { OAuth20Auth, oauth20LoginContexts } from './oauth20.js';
import { QueryAuth } from './query.js';

export interface AuthFactoryOptions {
  /** `parameters.api` */
  api: JsonObject;
  /** the configuration (iteration) without `jobs`, as written */
  attributes: JsonObject;
  /** the same, flattened: the `attr` context of user functions */
  attr: Map<string, JsonValue>;
  /** config.json `authorization` (OAuth credentials) */
  authorization: JsonObject;
  settings: ApiSettings;
  functions: UserFunctions;
  logger: Logger;
  /** credentials obtained at run time are registered here, so logs hide them */
  secrets: SecretSink;
  runtime?: Partial<AuthRuntime>;
}

/**
 * The authentication of one configuration (iteration) — GE `Api::createAuth`: none when
 * `api.authentication.type` is PHP-empty, else one of AUTH_TYPES; credentials are checked here,
 * before any request is sent.
 */
export function createAuth(options: AuthFactoryOptions): AuthMethod | null {
  const { api, logger } = options;
  const runtime: AuthRuntime = { ...SYSTEM_RUNTIME, ...options.runtime };
  const section = api.get('authentication');
  const authentication: JsonObject = isJsonObject(section) ? section : new Map();
  const type = authentication.get('type');
  if (phpEmpty(type)) {
    logger.debug('Using no authentication.');
    return null;
  }
  const name = phpToString(type);
  logger.debug(`Using '${name}' authentication.`);
  const create = Object.hasOwn(AUTH_METHODS, name) ? AUTH_METHODS[name as AuthType] : undefined;
  if (!create)
    throw new ConfigError(
      `${AUTH_PATH}.type`,
      `unknown authorization type '${name}'`,
      `Use one of ${AUTH_TYPES.join(', ')}`,
    );
  return create(name, authentication, { ...options, runtime });
}

type AuthContext = Omit<AuthFactoryOptions, 'runtime'> & { runtime: AuthRuntime };

/**
 * The authentication methods by `api.authentication.type`: the one list of them (the schema's enum
 * and the error for an unknown type read it). Each checks its credentials before any request.
 */
const AUTH_METHODS = {
  basic: (_name: string, _authentication: JsonObject, { attributes, logger, secrets }: AuthContext): AuthMethod => {
    if (!phpEmpty(attributes.get('password')) && phpEmpty(attributes.get('#password'))) {
      logger.warn("Using deprecated 'password', use '#password' instead.");
      registerSecret(secrets, attributes.get('password'));
    }
    return new BasicAuth(attributes, secrets);
  },
  query: (name: string, authentication: JsonObject, context: AuthContext): AuthMethod =>
    queryAuth(name, authentication, context),
  'url.query': (name: string, authentication: JsonObject, context: AuthContext): AuthMethod => {
    context.logger.warn("Method 'url.query' auth is deprecated, use 'query'.");
    return queryAuth(name, authentication, context);
  },
  login: (
    name: string,
    authentication: JsonObject,
    { settings, functions, attr, logger, secrets, runtime }: AuthContext,
  ): AuthMethod =>
    new LoginAuth(name, authentication, { attr }, { api: settings, functions, attr, logger, secrets, runtime }),
  oauth10: (_name: string, _authentication: JsonObject, { authorization, runtime, secrets }: AuthContext): AuthMethod =>
    new OAuth10Auth(authorization, runtime, secrets),
  oauth20: (
    _name: string,
    authentication: JsonObject,
    { authorization, functions, runtime, secrets }: AuthContext,
  ): AuthMethod => new OAuth20Auth(authorization, authentication, functions, runtime, secrets),
  'oauth20.login': (
    name: string,
    authentication: JsonObject,
    { authorization, settings, functions, attr, logger, secrets, runtime }: AuthContext,
  ): AuthMethod => {
    const contexts = { ...oauth20LoginContexts(authorization, secrets), attr };
    return new LoginAuth(name, authentication, contexts, { api: settings, functions, attr, logger, secrets, runtime });
  },
};

type AuthType = keyof typeof AUTH_METHODS;

export const AUTH_TYPES = Object.keys(AUTH_METHODS) as AuthType[];

function queryAuth(
  name: string,
  authentication: JsonObject,
  { api, functions, attr, logger, secrets }: AuthContext,
): AuthMethod {
  let query = authentication.get('query');
  if (phpEmpty(query) && !phpEmpty(api.get('query'))) {
    logger.warn("Using 'api.query' is deprecated, use 'api.authentication.query'.");
    query = api.get('query');
  }
  if (phpEmpty(query)) {
    throw new UserError(
      'GEX_CONFIG_INVALID',
      `The query authentication method requires 'query' configuration in 'authentication' section: set ${AUTH_PATH}.query, e.g. {"api_key": {"attr": "#apiKey"}}.`,
    );
  }
  return new QueryAuth(name, functionMap(query, `${AUTH_PATH}.query`), functions, attr, secrets);
}
