import { StoreError } from './store-error.js';
import type { TokenInfo } from './types.js';

/**
 * Secrets decrypted for a run elsewhere (docs/security.md#who-sees-a-secret): a runner token — and
 * no other — may ask its server for the plaintext of its project's ciphers, so a runner holds a
 * token and no master key. Shared by the store that decrypts, the route that serves it and the
 * remote store that asks.
 */

/** Which ciphers a runner asks to decrypt: its project's (configurations, rows, states) or the component registry's. */
export interface RevealRequest {
  scope: 'project' | 'component';
  componentId: string;
  ciphers: readonly string[];
}

/** Ciphers one request may carry (a runner sends more in several). */
export const MAX_REVEAL_CIPHERS = 1000;

/** Refuses (403) a token that is not a runner token, saying what to do instead. */
export function requireRunner(token: TokenInfo): void {
  if (!token.runner)
    throw StoreError.accessDenied(
      'Only a runner token receives secrets decrypted, and this token is not one. The operator of the store makes one with "gex tokens create --runner"; or run the configuration as a job on the server ("gex jobs run --wait").',
    );
}
