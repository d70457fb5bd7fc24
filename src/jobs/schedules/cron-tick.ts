import cronParser from 'cron-parser';

/** A cron expression in a time zone: when its ticks fall. Pure; the clock is always passed in. */
export interface CronTicks {
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
  const parse = (currentDate: Date) => cronParser.parseExpression(expression, { currentDate, tz: timeZone });
  try {
    parse(new Date(0));
  } catch (error) {
    throw new CronProblem((error as Error).message);
  }
  return {
    latestAtOrBefore(now) {
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
      try {
        return parse(after).next().toDate();
      } catch {
        return undefined;
      }
    },
  };
}
