import { UserError } from '../common/errors.js';
import { displayText } from '../common/log-text.js';
import { StoreError } from './store-error.js';

/**
 * The one wording of a token problem, for every command that sends one (configs, rows, state,
 * tables, components, jobs, schedules, run, check): which server refused which token — by where
 * the token came from, never its text — and how to give another.
 */

/** Where a command's token came from: the option, or the variable that gave its default. */
export type TokenOrigin = '--token' | 'KBC_TOKEN';

const HOW = 'Pass a valid token with --token (or set KBC_TOKEN)';

/**
 * `server` refused the token (a 401): `the Storage API at https://…`, `the Job Queue API at …`,
 * `the store gex-store.sqlite`. `said`: the server's own words (cut, made safe).
 */
export function tokenRefused(server: string, origin: TokenOrigin | undefined, said: string, code = ''): StoreError {
  const words = `${displayText(said.slice(0, 300))}${code ? ` [${displayText(code.slice(0, 100))}]` : ''}`;
  return new StoreError(
    401,
    code,
    `${capitalize(server)} refused the token${origin ? ` from ${origin}` : ''}: ${words}. ${HOW}.`,
    undefined,
    'GEX_STORE_TOKEN_INVALID',
  );
}

/** A Storage API (or a service of its stack) was named without a token. */
export function tokenMissing(server: string): UserError {
  return new UserError('GEX_STORE_TOKEN_INVALID', `${capitalize(server)} needs a token: none was given. ${HOW}.`);
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
