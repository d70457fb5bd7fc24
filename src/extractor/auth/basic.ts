import { UserError } from '../../common/errors.js';
import { type JsonObject } from '../../json/index.js';
import { phpEmpty, phpToString } from '../../php/index.js';
import type { HttpRequest } from '../http/types.js';
import type { AuthMethod, SecretSink } from './auth-method.js';
import { withHeader } from './request-parts.js';

/**
 * `basic`: `Authorization: Basic base64(user:password)` on every request, replacing any configured
 * one. The credentials are config attributes: `username` if PHP-non-empty else `#username`, and
 * `password` else `#password` (GE Authentication\Basic).
 */
export class BasicAuth implements AuthMethod {
  readonly type = 'basic';
  private readonly header: string;

  constructor(attributes: JsonObject, secrets: SecretSink) {
    if (phpEmpty(attributes.get('username')) && phpEmpty(attributes.get('#username'))) {
      throw new UserError(
        'GEX_CONFIG_INVALID',
        "Missing the required '#username' (or 'username') attribute in config: set parameters.config.#username for basic authentication.",
      );
    }
    if (phpEmpty(attributes.get('password')) && phpEmpty(attributes.get('#password'))) {
      throw new UserError(
        'GEX_CONFIG_INVALID',
        "Missing the required '#password' attribute in config: set parameters.config.#password for basic authentication.",
      );
    }
    const username = phpToString(
      phpEmpty(attributes.get('username')) ? attributes.get('#username') : attributes.get('username'),
    );
    const password = phpToString(
      phpEmpty(attributes.get('password')) ? attributes.get('#password') : attributes.get('password'),
    );
    // the header is base64 of the pair: hidden as a whole (the masker hides base64 of what it holds)
    secrets.add(`${username}:${password}`);
    this.header = `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
  }

  async beforeRequest(request: HttpRequest): Promise<HttpRequest> {
    return withHeader(request, 'Authorization', this.header);
  }
}
