import { ApplicationError } from '../../common/errors.js';
import { isJsonObject, type JsonValue } from '../../json/index.js';
import { CIPHER_PREFIX, ciphersIn, COMPONENT_CIPHER_PREFIX, mapCiphers, SecretNotDecrypted } from '../encryption.js';
import { MAX_REVEAL_CIPHERS, type RevealRequest } from '../secret-reveal.js';
import { StoreError } from '../store-error.js';
import type { StorageApiClient } from './storage-api-client.js';

/** What a run does when the server decrypts nothing for its token: fail, or keep the ciphers (image parameters). */
export type WhenRefused = 'fail' | 'keep';

/**
 * A remote store's secrets, decrypted by its server for a runner token (`POST
 * /v2/storage/gex/decrypt`; docs/security.md#who-sees-a-secret): the runner holds a token and no
 * key. The plaintext stays in this object's memory for the run (the root configuration's secrets
 * recur in every row: asked once); the caller registers it with the run's masker.
 */
export class RemoteSecrets {
  private readonly plain = new Map<string, string | null>();

  constructor(
    private readonly api: StorageApiClient,
    private readonly location: string,
  ) {}

  /**
   * `value` with every cipher of the scope under a `#` key replaced by its plaintext. One the
   * server cannot decrypt is a SecretNotDecrypted naming its key path; a token that is not a
   * runner token, or a Storage API that decrypts for no runner (a Keboola stack), fails the same way
   * — or, with `whenRefused: 'keep'`, leaves `value` as it is.
   */
  async decrypt(
    scope: RevealRequest['scope'],
    componentId: string,
    value: JsonValue,
    whenRefused: WhenRefused,
  ): Promise<JsonValue> {
    const prefix = scope === 'project' ? CIPHER_PREFIX : COMPONENT_CIPHER_PREFIX;
    const ciphers = ciphersIn(value, prefix);
    if (ciphers.length === 0) return value;
    const refusal = await this.ask(scope, componentId, ciphers);
    if (refusal && whenRefused === 'keep') return value;
    return mapCiphers(value, prefix, (cipher, where) => {
      if (refusal) throw new SecretNotDecrypted(where, refusal.reason, refusal.fix);
      const text = this.plain.get(this.key(scope, componentId, cipher));
      if (typeof text !== 'string')
        throw new SecretNotDecrypted(where, NOT_DECRYPTED, scope === 'project' ? REENTER : REREGISTER);
      return text;
    });
  }

  private key(scope: string, componentId: string, cipher: string): string {
    return `${scope} ${componentId} ${cipher}`;
  }

  /** Asks the server for the ciphers not known yet; a refusal of the token or of the server is returned. */
  private async ask(
    scope: RevealRequest['scope'],
    componentId: string,
    ciphers: string[],
  ): Promise<{ reason: string; fix: string } | undefined> {
    const missing = ciphers.filter((c) => !this.plain.has(this.key(scope, componentId, c)));
    for (let at = 0; at < missing.length; at += MAX_REVEAL_CIPHERS) {
      const part = missing.slice(at, at + MAX_REVEAL_CIPHERS);
      let answer: JsonValue;
      try {
        const body = new Map<string, JsonValue>([
          ['componentId', componentId],
          ['scope', scope],
          ['ciphers', part],
        ]);
        answer = await this.api.call('POST', 'gex/decrypt', body);
      } catch (error) {
        const refusal = this.refusalOf(error);
        if (refusal) return refusal;
        throw error;
      }
      const values = isJsonObject(answer) ? answer.get('values') : undefined;
      if (
        !Array.isArray(values) ||
        values.length !== part.length ||
        values.some((v) => v !== null && typeof v !== 'string')
      )
        throw new ApplicationError(
          'GEX_STORAGE_API_FAILED',
          `The Storage API at ${this.location} answered POST gex/decrypt with something else than one value or null per cipher.`,
        );
      part.forEach((cipher, i) => this.plain.set(this.key(scope, componentId, cipher), values[i] as string | null));
    }
    return undefined;
  }

  private refusalOf(error: unknown): { reason: string; fix: string } | undefined {
    if (!(error instanceof StoreError)) return undefined;
    if (error.status === 403)
      return {
        reason: `the Storage API at ${this.location} gives secrets decrypted only to a runner token, and this token is not one`,
        fix: 'Ask the operator of the server for a runner token ("gex tokens create --runner"), or run the configuration as a job on the server ("gex jobs run --wait"). A runner never needs the master key.',
      };
    if (error.status === 404 || error.status === 405 || error.status === 501)
      return {
        reason: `the Storage API at ${this.location} decrypts no secret for a runner elsewhere (a Keboola stack decrypts only inside its own jobs)`,
        fix: 'Run the configuration where its store decrypts it: as a job there, or from a gex server with a runner token ("gex tokens create --runner").',
      };
    return undefined;
  }
}

const NOT_DECRYPTED =
  'the server cannot decrypt it: it was encrypted with another master key, for another project or component, or is damaged';
const REENTER = 'Enter the secret again through this server (gex configs edit, gex rows edit).';
const REREGISTER = "Register the component again in the server's store (gex components import).";
