import type { IncomingHttpHeaders } from 'node:http';

/**
 * Proactive rate limiting, shared by every request of one HTTP client (all jobs, child jobs and
 * parallel pages): a configured request rate (`api.http.maxRequestsPerSecond`, a gex addition)
 * and the pauses an API announces in `RateLimit-*` / `X-RateLimit-*` headers before it would
 * answer 429. Both only delay requests; they never change or drop one.
 *
 * The pure parts (header parsing, the schedule) take the time as an argument, in the style of
 * got's pure helpers, so tests drive them with a fake clock.
 */

export interface RateLimiterOptions {
  /** requests per second at most; undefined = no configured rate (headers only) */
  ratePerSecond?: number;
  /** requests that may go at once after an idle period (default 1: evenly spaced) */
  burst?: number;
  now?: () => number;
}

/**
 * A token bucket as a schedule (GCRA): each reservation gets the earliest time at which it may be
 * sent, and the next one is due an interval later. Reservations are taken synchronously, so
 * concurrent callers each get their own slot and together never exceed the rate.
 */
export class RateLimiter {
  private readonly intervalMs: number;
  private readonly toleranceMs: number;
  private readonly now: () => number;
  /** when the next request would be due if requests came evenly (GCRA's theoretical arrival time) */
  private dueAt = -Infinity;
  /** no request before this time (an API announced that its window is used up) */
  private pausedUntil = -Infinity;

  constructor(options: RateLimiterOptions = {}) {
    const rate = options.ratePerSecond;
    this.intervalMs = rate !== undefined && rate > 0 && Number.isFinite(rate) ? 1000 / rate : 0;
    this.toleranceMs = Math.max(0, Math.floor(options.burst ?? 1) - 1) * this.intervalMs;
    this.now = options.now ?? Date.now;
  }

  /** Reserves the next slot; returns how many milliseconds to wait before sending (0 = now). */
  reserve(): number {
    const now = this.now();
    const at = Math.max(now, this.dueAt - this.toleranceMs, this.pausedUntil);
    this.dueAt = Math.max(this.dueAt, at) + this.intervalMs;
    return at - now;
  }

  /** Milliseconds left of an announced pause (0 = none), without reserving anything. */
  pauseLeft(): number {
    return Math.max(0, this.pausedUntil - this.now());
  }

  /** Holds every request not yet sent for `ms` from now (a pause never shortens an earlier one). */
  pauseFor(ms: number): void {
    if (!(ms > 0) || !Number.isFinite(ms)) return;
    this.pausedUntil = Math.max(this.pausedUntil, this.now() + ms);
  }
}

const INTEGER = /^\d{1,15}$/;
const NUMBER = /^\d{1,15}(\.\d{1,9})?$/;
/** reset values above this are Unix times in seconds, above EPOCH_MS ones in milliseconds */
const EPOCH_SECONDS = 1e9;
const EPOCH_MS = 1e12;

function firstValue(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  // several policies are listed comma-separated; the first is the one that applies to this request
  return text?.split(',')[0]?.trim();
}

/** `remaining` as a count; undefined unless it is a plain non-negative integer. */
function parseRemaining(text: string | undefined): number | undefined {
  return text !== undefined && INTEGER.test(text) ? Number(text) : undefined;
}

/** A reset in seconds from now (or a Unix time), as milliseconds from `nowMs`; undefined when not a plain number. */
function parseReset(text: string | undefined, nowMs: number, epochAllowed: boolean): number | undefined {
  if (text === undefined || !NUMBER.test(text)) return undefined;
  const n = Number(text);
  if (epochAllowed && n > EPOCH_MS) return n - nowMs;
  if (epochAllowed && n > EPOCH_SECONDS) return n * 1000 - nowMs;
  return n * 1000;
}

/** `RateLimit: limit=100, remaining=0, reset=30` (and the newer `"policy";r=0;t=30`) as its parameters. */
function parseCombined(value: string | string[] | undefined): { remaining?: string; reset?: string } {
  const text = Array.isArray(value) ? value.join(',') : value;
  if (text === undefined || text.length > 1000) return {};
  const found: { remaining?: string; reset?: string } = {};
  for (const part of text.split(/[,;]/)) {
    const match = /^\s*([a-z]+)\s*=\s*"?([^"\s]*)"?\s*$/i.exec(part);
    if (!match) continue;
    const key = match[1].toLowerCase();
    // the first policy that names a value wins, as with the separate headers
    if ((key === 'remaining' || key === 'r') && found.remaining === undefined) found.remaining = match[2];
    if ((key === 'reset' || key === 't') && found.reset === undefined) found.reset = match[2];
  }
  return found;
}

/**
 * How long the API asks us to hold off before the next request, from its rate limit headers: the
 * time until reset when it says no requests remain; null when it does not (remaining above 0,
 * headers absent or not plain numbers, a reset already past). `RateLimit-Reset` is seconds from
 * now (IETF draft); `X-RateLimit-Reset` is seconds or, above 10^9, a Unix time (10^12: in ms).
 */
export function rateLimitPauseMs(headers: IncomingHttpHeaders, nowMs: number): number | null {
  const combined = parseCombined(headers['ratelimit']);
  const candidates: Array<[string | undefined, number | undefined]> = [
    [firstValue(headers['ratelimit-remaining']), parseReset(firstValue(headers['ratelimit-reset']), nowMs, false)],
    [combined.remaining, parseReset(combined.reset, nowMs, false)],
    [firstValue(headers['x-ratelimit-remaining']), parseReset(firstValue(headers['x-ratelimit-reset']), nowMs, true)],
  ];
  let pause: number | null = null;
  for (const [remainingText, resetMs] of candidates) {
    if (parseRemaining(remainingText) !== 0 || resetMs === undefined || !(resetMs > 0)) continue;
    pause = Math.max(pause ?? 0, Math.ceil(resetMs));
  }
  return pause;
}
