import { randomBytes } from 'node:crypto';
import type { HttpRequest, Send } from '../http/types.js';

/**
 * One authentication method of Generic Extractor (`api.authentication.type`). The HttpClient
 * calls `beforeRequest` on every attempt of every request — GE's auth middleware sits inside the
 * retry middleware (docs/ge-behaviour.md#retries) — so signatures, nonces, timestamps and the login expiry
 * are recomputed per attempt. It returns the request to send (a new object; the input is kept).
 */
export interface AuthMethod {
  /** the configured type, e.g. "oauth20.login" */
  readonly type: string;
  /** `send` sends a request of the method's own (a login) through the client, without this auth */
  beforeRequest(request: HttpRequest, send: Send): Promise<HttpRequest>;
}

/** The clock and randomness the auth methods use; tests replace them. */
export interface AuthRuntime {
  /** unix time in whole seconds (PHP `time()`) */
  now(): number;
  /** `length` random lower-case hex characters (OAuth nonces) */
  nonce(length: number): string;
}

export const SYSTEM_RUNTIME: AuthRuntime = {
  now: () => Math.floor(Date.now() / 1000),
  nonce: (length) =>
    randomBytes(Math.ceil(length / 2))
      .toString('hex')
      .slice(0, length),
};

/** Where secrets obtained at run time are registered so that logs hide them (a SecretMasker). */
export interface SecretSink {
  add(secret: string): void;
  /** a value valid for one request (a signature): hidden while it is among the most recent ones */
  addRecent?(value: string): void;
  /** the text with every registered secret hidden (error messages quoting an API's answer) */
  mask?(text: string): string;
}
