import cronParser from 'cron-parser';
import { dayFieldsProblem } from './cron-calendar.js';

/** A cron expression in a time zone: when its ticks fall. Pure; the clock is always passed in. */
export interface CronTicks {
  /**
   * Why the expression never fires (its days never come, or decades apart): refused when a schedule
   * is activated; one stored by an older gex is skipped. Undefined when it fires.
   */
  readonly never: string | undefined;
  /** the latest tick at or before `now`, or undefined when the expression never fired before it */
  latestAtOrBefore(now: Date): Date | undefined;
  /** the first tick after `after` */
  nextAfter(after: Date): Date | undefined;
}

/** Why an expression or a time zone is refused (the caller names the field). */
export class CronProblem extends Error {}

const MAX_EXPRESSION = 200;

/** True when `timeZone` is an IANA time zone name Node knows (Intl's own list). */
export function isKnownTimeZone(timeZone: string): boolean {
  if (timeZone.length === 0 || timeZone.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Parses a 5-field (minute first) or 6-field (second first) cron expression in `timeZone`.
 * Local times are what the fields mean: a tick in the hour skipped by a spring-forward change
 * fires an hour later, and a daily tick in an hour repeated at fall-back fires once (cron-parser's rules).
 *
 * cron-parser takes 0.1–15 ms per tick asked (it steps through the calendar in the zone), so
 * callers ask rarely: `nextAfter` remembers its last answer, which holds for every `after` from the
 * one asked up to the tick found (schedules of one expression share it).
 */
export function cronTicks(expression: string, timeZone: string): CronTicks {
  if (expression.length === 0 || expression.length > MAX_EXPRESSION)
    throw new CronProblem(`expected a cron expression of at most ${MAX_EXPRESSION} characters`);
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6)
    throw new CronProblem(
      `expected 5 fields (minute hour day month weekday) or 6 (with seconds first), got ${fields.length}`,
    );
  if (!isKnownTimeZone(timeZone))
    throw new CronProblem('unknown time zone: expected an IANA name such as Europe/Prague or UTC');
  // a fresh iterator per question: cron-parser keeps DST state across next()/prev() calls
  const parse = (currentDate: Date) => cronParser.parseExpression(expression, { currentDate, tz: timeZone });
  let parsed;
  try {
    parsed = parse(new Date(0));
  } catch (error) {
    throw new CronProblem((error as Error).message);
  }
  const [dayOfMonth, month, dayOfWeek] = fields.slice(-3);
  // `weekday#n` as cron-parser reads it (it checked n is 1–5)
  const nth = dayOfWeek.split('#');
  const never = dayFieldsProblem(
    { ...parsed.fields, nthDayOfWeek: nth.length > 1 ? Number(nth[nth.length - 1]) : 0 },
    { dayOfMonth, month, dayOfWeek },
  );
  /** the last nextAfter answered: `to` is the first tick after every instant in [from, to) */
  let known: { from: number; to: number } | undefined;
  return {
    never,
    latestAtOrBefore(now) {
      if (never) return undefined;
      // prev() is strictly before its start: start one millisecond later to include `now` itself
      try {
        return parse(new Date(now.getTime() + 1))
          .prev()
          .toDate();
      } catch {
        return undefined;
      }
    },
    nextAfter(after) {
      if (never) return undefined;
      const at = after.getTime();
      if (known && at >= known.from && at < known.to) return new Date(known.to);
      try {
        const next = parse(after).next().toDate();
        known = { from: at, to: next.getTime() };
        return next;
      } catch {
        return undefined;
      }
    },
  };
}
