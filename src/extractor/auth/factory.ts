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

export const AUTH_TYPES = ['basic', 'query', 'url.query', 'login', 'oauth10', 'oauth20', 'oauth20.login'] as const;

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
  const { api, attributes, attr, authorization, settings, functions, logger, secrets } = options;
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
  switch (name) {
    case 'basic':
      if (!phpEmpty(attributes.get('password')) && phpEmpty(attributes.get('#password'))) {
        logger.warn("Using deprecated 'password', use '#password' instead.");
        registerSecret(secrets, attributes.get('password'));
      }
      return new BasicAuth(attributes, secrets);
    case 'url.query':
    case 'query': {
      if (name === 'url.query') logger.warn("Method 'url.query' auth is deprecated, use 'query'.");
      let query = authentication.get('query');
      if (phpEmpty(query) && !phpEmpty(api.get('query'))) {
        logger.warn("Using 'api.query' is deprecated, use 'api.authentication.query'.");
        query = api.get('query');
      }
      if (phpEmpty(query)) {
        throw new UserError(`The query authentication method requires 'query' configuration in 'authentication' section: set ${AUTH_PATH}.query, e.g. {"api_key": {"attr": "#apiKey"}}.`);
      }
      return new QueryAuth(name, functionMap(query, `${AUTH_PATH}.query`), functions, attr, secrets);
    }
    case 'login':
      return new LoginAuth(name, authentication, { attr }, { api: settings, functions, attr, logger, secrets, runtime });
    case 'oauth10':
      return new OAuth10Auth(authorization, runtime, secrets);
    case 'oauth20':
      return new OAuth20Auth(authorization, authentication, functions, runtime, secrets);
    case 'oauth20.login': {
      const contexts = { ...oauth20LoginContexts(authorization, secrets), attr };
      return new LoginAuth(name, authentication, contexts, { api: settings, functions, attr, logger, secrets, runtime });
    }
    default:
      throw new ConfigError(`${AUTH_PATH}.type`, `unknown authorization type '${name}'`, `Use one of ${AUTH_TYPES.join(', ')}`);
  }
}
