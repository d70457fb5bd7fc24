import { setTimeout as sleep } from 'node:timers/promises';
import { UserError } from '../../common/errors.js';
import { calculateRetryDelay } from '../../common/retry-delay.js';

/** Time as the retry loop sees it; tests pass a fake one so that nothing sleeps. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const SYSTEM_CLOCK: Clock = { now: () => Date.now(), sleep: (ms) => sleep(ms) };

export interface RetryBudgetSettings {
  /** the longest one call may take, every attempt and wait included */
  totalMs: number;
  /** retries at most */
  maxRetries: number;
  /** the first wait, doubling */
  baseDelayMs: number;
  /** the longest one attempt may take (never past the end of the budget) */
  attemptTimeoutMs: number;
  /** the longest one attempt may wait for a connection */
  connectTimeoutMs: number;
}

/**
 * Store calls of `gex run`: the official client's policy (11 retries, 1 s doubling) bounded by
 * 10 minutes, so that a store restarting (or a state save at the end of a long run) is waited for,
 * but a store that is gone fails the run in bounded time.
 */
export const RUN_STORE_RETRY: RetryBudgetSettings = {
  totalMs: 600_000,
  maxRetries: 11,
  baseDelayMs: 1000,
  attemptTimeoutMs: 120_000,
  connectTimeoutMs: 30_000,
};

/** Commands a person waits for (`gex configs …`): one clear answer within 20 s. */
export const INTERACTIVE_STORE_RETRY: RetryBudgetSettings = {
  totalMs: 20_000,
  maxRetries: 11,
  baseDelayMs: 500,
  attemptTimeoutMs: 10_000,
  connectTimeoutMs: 5_000,
};

export const STORE_TIMEOUT_VARIABLE = 'GEX_STORE_TIMEOUT';

/** `GEX_STORE_TIMEOUT` (seconds) replaces the budget of every store call. */
export function retrySettingsFromEnv(
  base: RetryBudgetSettings,
  env: NodeJS.ProcessEnv = process.env,
): RetryBudgetSettings {
  const text = env[STORE_TIMEOUT_VARIABLE]?.trim();
  if (!text) return base;
  if (!/^\d+(\.\d+)?$/.test(text) || Number(text) <= 0 || Number(text) > 86_400) {
    throw new UserError(
      'GEX_SETTING_INVALID',
      `${STORE_TIMEOUT_VARIABLE} must be a number of seconds above 0 (at most 86400), got "${text}"`,
    );
  }
  return { ...base, totalMs: Math.round(Number(text) * 1000) };
}

/** Waits shorter than this before the end of the budget leave no room for a useful attempt. */
const SMALLEST_ATTEMPT_MS = 500;

/**
 * The time budget of one store call: how long the next attempt may take and whether (and how
 * long) to wait before retrying. Attempts and waits together never exceed `totalMs`.
 */
export class RetryBudget {
  private readonly startedAt: number;

  constructor(
    readonly settings: RetryBudgetSettings,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    this.startedAt = clock.now();
  }

  now(): number {
    return this.clock.now();
  }

  /** When the budget runs out: no attempt or wait goes past it. */
  deadline(): number {
    return this.startedAt + this.settings.totalMs;
  }

  elapsedMs(): number {
    return this.clock.now() - this.startedAt;
  }

  /** The timeout of the next attempt: its own limit, cut to what is left of the budget. */
  attemptTimeoutMs(): number {
    return Math.max(1, Math.min(this.settings.attemptTimeoutMs, this.settings.totalMs - this.elapsedMs()));
  }

  connectTimeoutMs(): number {
    return Math.min(this.settings.connectTimeoutMs, this.attemptTimeoutMs());
  }

  /**
   * The wait before retry number `retry` (1-based) — `requestedMs` when the server asked for one
   * (Retry-After) — or null when the call must give up now.
   */
  delayBefore(retry: number, requestedMs?: number | null): number | null {
    const delay = calculateRetryDelay({
      attempt: retry,
      retryable: true,
      maxRetries: this.settings.maxRetries,
      backoffBaseMs: this.settings.baseDelayMs,
      requestedMs,
      remainingMs: this.settings.totalMs - this.elapsedMs(),
      minAttemptMs: SMALLEST_ATTEMPT_MS,
    });
    return delay?.ms ?? null;
  }

  sleep(ms: number): Promise<void> {
    return this.clock.sleep(ms);
  }
}
