import { UserError } from '../../common/errors.js';
import { isNumericString } from '../../php/index.js';
import type { RetrySettings } from '../config/api-settings.js';
import { isCertificateError } from '../../common/network-errors.js';
import { calculateRetryDelay, type RetryDelay } from '../../common/retry-delay.js';

export type { RetryDelay };

/** Node.js error codes for the curl errors GE retries (curl numbers are what users configure). */
const CURL_CODES: Record<string, number> = {
  ETIMEDOUT: 28,
  ESOCKETTIMEDOUT: 28,
  ENOTFOUND: 6,
  EAI_AGAIN: 6,
  ECONNREFUSED: 7,
  EHOSTUNREACH: 7,
  ENETUNREACH: 7,
  EADDRNOTAVAIL: 7,
  EPROTO: 35,
  ECONNRESET: 56,
  EPIPE: 56,
};

export function curlCodeOf(error: { code?: string }): number | undefined {
  const code = error.code ?? '';
  if (code in CURL_CODES) return CURL_CODES[code];
  // curl's "SSL peer certificate or SSH remote key was not OK" (GE's message for it: CURL error 60)
  if (isCertificateError(error)) return 60;
  if (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS')) return 35;
  return undefined;
}

/**
 * GE's retry decision (juicer RetryHandler): listed status codes (any, even 2xx) and listed
 * network errors are retried up to `maxRetries` times; the wait comes from the retry header
 * (seconds, a unix timestamp or an HTTP date) or doubles from `backoffBase` (1 s, 2 s, 4 s…).
 * Unlike GE, a server may not impose a wait longer than `maxRetryWait`.
 */
export class RetryPolicy {
  constructor(
    readonly settings: RetrySettings,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The wait before retrying after attempt `attempt` (1-based) ended in `outcome`, or null when it
   * is final: a status or error not listed, or no retries left.
   */
  decide(
    attempt: number,
    outcome: { status: number } | { error: { code?: string } },
    headerValue: string | undefined,
    url: string,
  ): RetryDelay | null {
    const retryable =
      'status' in outcome ? this.settings.httpCodes.includes(outcome.status) : this.retriesError(outcome.error);
    const delay = calculateRetryDelay({
      attempt,
      retryable,
      maxRetries: this.settings.maxRetries,
      backoffBaseMs: this.settings.backoffBaseMs,
      requestedMs: this.headerDelay(headerValue),
    });
    if (delay?.source === 'header' && delay.ms > this.settings.maxRetryWaitMs) {
      throw new UserError(
        'GEX_API_RETRY_WAIT_TOO_LONG',
        `The API asked to wait ${Math.ceil(delay.ms / 1000)} s (${this.settings.retryHeader}: ${headerValue}) before retrying ${url}, ` +
          `longer than the ceiling of ${this.settings.maxRetryWaitMs / 1000} s. Retry later or raise parameters.api.retryConfig.maxRetryWait.`,
      );
    }
    return delay;
  }

  /**
   * The waits still ahead when retry `attempt` (1-based) waits `firstMs` and every later one
   * backs off (a Retry-After cannot be known in advance): what a request that keeps failing
   * still costs, attempts' own time aside.
   */
  waitsAhead(attempt: number, firstMs: number): number {
    let total = firstMs;
    for (let retry = attempt + 1; retry <= this.settings.maxRetries; retry++)
      total += this.settings.backoffBaseMs * 2 ** (retry - 1);
    return total;
  }

  private retriesError(error: { code?: string }): boolean {
    const curl = curlCodeOf(error);
    return curl !== undefined && this.settings.curlCodes.includes(curl);
  }

  private headerDelay(value: string | undefined): number | null {
    if (value === undefined || value.trim() === '') return null;
    const nowSeconds = Math.floor(this.now() / 1000);
    if (isNumericString(value)) {
      const n = Math.trunc(Number(value));
      // small numbers are seconds, large ones a unix timestamp (GE's rule)
      return n < nowSeconds - 86400 ? n * 1000 : (n - nowSeconds) * 1000;
    }
    const date = Date.parse(value);
    return Number.isNaN(date) ? null : date - this.now();
  }
}
