/**
 * Whether, and how long, to wait before retrying a failed attempt: the one rule behind every retry
 * loop of gex (the extractor's HTTP client and the remote store), pure in the style of got's
 * `calculate-retry-delay` — no clock, no I/O, so each loop only supplies the facts.
 */
export interface RetryInput {
  /** the attempt that just failed, 1-based */
  attempt: number;
  /** whether this failure is one to retry (a listed status, a network error) */
  retryable: boolean;
  maxRetries: number;
  /** the first backoff; it doubles with each retry */
  backoffBaseMs: number;
  /** a wait the server asked for (a Retry-After header), when it gave a positive one */
  requestedMs?: number | null;
  /** time left of the caller's budget: a wait that leaves less than `minAttemptMs` gives up */
  remainingMs?: number;
  minAttemptMs?: number;
}

export interface RetryDelay {
  ms: number;
  source: 'header' | 'backoff';
}

export function calculateRetryDelay(input: RetryInput): RetryDelay | null {
  if (!input.retryable || input.attempt > input.maxRetries) return null;
  const requested = input.requestedMs ?? null;
  const delay: RetryDelay =
    requested !== null && requested > 0
      ? { ms: requested, source: 'header' }
      : { ms: input.backoffBaseMs * 2 ** (input.attempt - 1), source: 'backoff' };
  if (input.remainingMs !== undefined && delay.ms + (input.minAttemptMs ?? 0) > input.remainingMs) return null;
  return delay;
}
