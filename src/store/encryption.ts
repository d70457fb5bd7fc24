import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationError, UserError } from '../common/errors.js';
import { displayText } from '../common/log-text.js';
import { isJsonObject, isScalar, type JsonObject, type JsonValue } from '../json/index.js';
import { phpToString } from '../php/index.js';

/** Configurations, rows and states: bound to a project and a component. */
export const CIPHER_PREFIX = 'KBC::ProjectSecure::';
/** The component registry (image parameters): bound to the component only — components are global. */
export const COMPONENT_CIPHER_PREFIX = 'KBC::ComponentSecure::';
const FORMAT_VERSION = 1;

/**
 * A `#` value that cannot be decrypted, with where it is (`#token`, `api.http.headers.#X-Key`,
 * relative to the tree decrypted) and why — never its value.
 */
export class SecretNotDecrypted extends UserError {
  constructor(
    readonly keyPath: string,
    readonly reason: string,
    /** what the user can do, when the caller knows better than the default (a remote store's server decrypts) */
    readonly fix?: string,
  ) {
    super('GEX_SECRET_NOT_DECRYPTED', `Cannot decrypt ${displayText(keyPath)}: ${reason}`);
    this.name = 'SecretNotDecrypted';
  }
}

/** Why a cipher of the right prefix did not decrypt: what the user can do about it. */
const WRONG_KEY = "it was encrypted with another master key (another store's?), or for another project or component";
const NOT_GEX_CIPHER = 'it is not a cipher text of gex (damaged or cut short)';

/** What a cipher is bound to: its prefix, and the associated data authenticated with it. */
export interface CipherScope {
  prefix: string;
  data: string;
}

/**
 * Encryption of secrets: scalar values under `#` keys are stored as
 * `<prefix><base64(version | iv | tag | ciphertext)>`, AES-256-GCM with the scope as associated
 * data — a cipher is only valid in the scope it was made for: `KBC::ProjectSecure::` for a project
 * and component, `KBC::ComponentSecure::` for a component of the registry (Keboola's scopes of the
 * same names). Values already starting with `KBC::` are left alone.
 */
export class SecretCipher {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new ApplicationError('GEX_INTERNAL', 'The master key must be 32 bytes');
  }

  /** Tells keys apart without revealing them: an HMAC of a fixed text under the key. */
  fingerprint(): string {
    return createHmac('sha256', this.key).update('gex master key check').digest('hex').slice(0, 32);
  }

  encrypt(plain: string, scope: CipherScope): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(scope.data));
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return (
      scope.prefix + Buffer.concat([Buffer.from([FORMAT_VERSION]), iv, cipher.getAuthTag(), data]).toString('base64')
    );
  }

  decrypt(value: string, scope: CipherScope): string {
    if (!value.startsWith(scope.prefix))
      throw new UserError(
        'GEX_SECRET_NOT_DECRYPTED',
        `Value is not an encrypted value of gex (expected the ${scope.prefix} prefix)`,
      );
    const raw = Buffer.from(value.slice(scope.prefix.length), 'base64');
    if (raw.length < 29 || raw[0] !== FORMAT_VERSION)
      throw new UserError('GEX_SECRET_NOT_DECRYPTED', `Invalid cipher text: ${NOT_GEX_CIPHER}`);
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(1, 13));
    decipher.setAAD(Buffer.from(scope.data));
    decipher.setAuthTag(raw.subarray(13, 29));
    try {
      return Buffer.concat([decipher.update(raw.subarray(29)), decipher.final()]).toString('utf8');
    } catch {
      throw new UserError(
        'GEX_SECRET_NOT_DECRYPTED',
        'Cannot decrypt a secret: it was encrypted for another project or component, or with another master key',
      );
    }
  }

  /**
   * Encrypts every plain scalar under a `#` key. Where `previous` (the stored value) holds a cipher
   * of the same plaintext at the same place, that cipher is kept, so re-sending a configuration
   * unchanged is recognised as a no-op.
   */
  encryptTree(value: JsonValue, scope: CipherScope, previous?: JsonValue): JsonValue {
    if (Array.isArray(value))
      return value.map((v, i) => this.encryptTree(v, scope, Array.isArray(previous) ? previous[i] : undefined));
    if (!isJsonObject(value)) return value;
    const out: JsonObject = new Map();
    for (const [key, v] of value) {
      const before = isJsonObject(previous) ? previous.get(key) : undefined;
      if (key.startsWith('#') && isScalar(v) && !(typeof v === 'string' && v.startsWith('KBC::'))) {
        const plain = phpToString(v);
        out.set(key, this.reuse(before, plain, scope) ?? this.encrypt(plain, scope));
      } else out.set(key, this.encryptTree(v, scope, before));
    }
    return out;
  }

  private reuse(before: JsonValue | undefined, plain: string, scope: CipherScope): string | undefined {
    if (typeof before !== 'string' || !before.startsWith(scope.prefix)) return undefined;
    try {
      return this.decrypt(before, scope) === plain ? before : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Decrypts every gex cipher of the scope under `#` keys (only ever in memory, for a run). One that
   * does not decrypt throws a SecretNotDecrypted naming its key path (`at` prefixes it).
   */
  decryptTree(value: JsonValue, scope: CipherScope, at = ''): JsonValue {
    return mapCiphers(value, scope.prefix, (cipher, where) => this.decryptAt(cipher, scope, where), at);
  }

  /**
   * Each cipher's plaintext, or null for one that is not a cipher of the scope or does not decrypt
   * under this key — never why (what a runner token is given: docs/security.md#who-sees-a-secret).
   */
  decryptEach(ciphers: readonly string[], scope: CipherScope): Array<string | null> {
    return ciphers.map((cipher) => {
      try {
        return this.decrypt(cipher, scope);
      } catch {
        return null;
      }
    });
  }

  private decryptAt(value: string, scope: CipherScope, where: string): string {
    const raw = Buffer.from(value.slice(scope.prefix.length), 'base64');
    if (raw.length < 29 || raw[0] !== FORMAT_VERSION) throw new SecretNotDecrypted(where, NOT_GEX_CIPHER);
    try {
      return this.decrypt(value, scope);
    } catch {
      throw new SecretNotDecrypted(where, WRONG_KEY);
    }
  }
}

/**
 * `value` with every cipher of `prefix` that is a string under a `#` key replaced by
 * `replace(cipher, keyPath)` (`parameters.#token`, `jobs[0].#key`, after `at`): the one rule of
 * which values are secrets to decrypt, for the store's own key and for a server that decrypts.
 */
export function mapCiphers(
  value: JsonValue,
  prefix: string,
  replace: (cipher: string, keyPath: string) => string,
  at = '',
): JsonValue {
  if (Array.isArray(value)) return value.map((v, i) => mapCiphers(v, prefix, replace, `${at}[${i}]`));
  if (!isJsonObject(value)) return value;
  const out: JsonObject = new Map();
  for (const [key, v] of value) {
    const where = at === '' ? key : `${at}.${key}`;
    if (key.startsWith('#') && typeof v === 'string' && v.startsWith(prefix)) out.set(key, replace(v, where));
    else out.set(key, mapCiphers(v, prefix, replace, where));
  }
  return out;
}

/** The distinct ciphers mapCiphers would replace in `value`, in the order first met. */
export function ciphersIn(value: JsonValue, prefix: string): string[] {
  const found = new Set<string>();
  mapCiphers(value, prefix, (cipher) => {
    found.add(cipher);
    return cipher;
  });
  return [...found];
}

export function cipherScope(projectId: number, componentId: string): CipherScope {
  return { prefix: CIPHER_PREFIX, data: `project:${projectId}|component:${componentId}` };
}

/** A secret a service keeps for a project (a webhook's signing secret): bound to the project and its purpose. */
export function serviceCipherScope(projectId: number, purpose: string): CipherScope {
  return { prefix: CIPHER_PREFIX, data: `project:${projectId}|service:${purpose}` };
}

/** Seals and opens the secrets one service keeps for projects, under the store's master key. */
export interface ProjectSecrets {
  seal(projectId: number, plain: string): string;
  open(projectId: number, sealed: string): string;
}

/**
 * Secrets of a registered component (`data.image_parameters`, …): one registry serves every
 * project, so the cipher is bound to the component alone. A component cipher copied into a
 * configuration is never decrypted there (it has another prefix and associated data).
 */
export function componentCipherScope(componentId: string): CipherScope {
  return { prefix: COMPONENT_CIPHER_PREFIX, data: `component:${componentId}` };
}

/**
 * The master key: `GEX_MASTER_KEY` (64 hex characters or base64 of 32 bytes), else a key file,
 * created with mode 0600 (its folder 0700) on first use — unless `create` is false (commands that
 * only read create nothing): a missing key file is then a user error.
 */
export async function loadMasterKey(
  keyFile: string,
  env: NodeJS.ProcessEnv = process.env,
  options: { create?: boolean; onCreate?: (what: string) => void } = {},
): Promise<Buffer> {
  const fromEnv = env.GEX_MASTER_KEY?.trim();
  if (fromEnv) return parseKey(fromEnv, 'GEX_MASTER_KEY');
  try {
    return parseKey((await readFile(keyFile, 'utf8')).trim(), keyFile);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (options.create === false) {
    throw new UserError(
      'GEX_MASTER_KEY_INVALID',
      `No master key: the key file ${keyFile} does not exist and GEX_MASTER_KEY is not set. Set GEX_MASTER_KEY (or GEX_KEY_FILE) to the store's key`,
    );
  }
  const key = randomBytes(32);
  await mkdir(path.dirname(keyFile), { recursive: true, mode: 0o700 });
  const created = await writeFile(keyFile, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' }).then(
    () => true,
    (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
      return false;
    },
  );
  if (created) options.onCreate?.(`a new master key file ${keyFile} (back it up with the store)`);
  await chmod(keyFile, 0o600);
  // another process may have won the race: read what is on disk
  return parseKey((await readFile(keyFile, 'utf8')).trim(), keyFile);
}

function parseKey(text: string, source: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32)
    throw new UserError(
      'GEX_MASTER_KEY_INVALID',
      `The master key in ${source} must be 32 bytes (64 hex characters or base64)`,
    );
  return key;
}
