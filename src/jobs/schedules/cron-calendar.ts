/**
 * Which days a cron expression's day fields select, decided on the calendar alone (no clock, no
 * time zone): an expression whose days never come (`0 0 31 4,6,9,11 *`) or come decades apart
 * would make cron-parser walk day by day up to its loop limit (10,000 steps, about 27 years of
 * days, some 0.4 s) every time it is asked for a tick. The rules are cron-parser's own
 * (CronExpression._findSchedule), replayed over the 400 years after which the Gregorian calendar
 * and its weekdays repeat.
 */

/** The day fields as cron-parser parsed them (`CronExpression.fields`), and the `n` of a `weekday#n`. */
export interface DayFields {
  readonly dayOfMonth: readonly (number | string)[];
  readonly month: readonly number[];
  readonly dayOfWeek: readonly (number | string)[];
  /** 1–5 for `weekday#n`, 0 without */
  readonly nthDayOfWeek: number;
}

/** The texts of the three day fields as written, to name them in a refusal. */
export interface DayFieldTexts {
  dayOfMonth: string;
  month: string;
  dayOfWeek: string;
}

/** days between two firing days beyond which cron-parser's search may give up (it steps a day at a time, 10,000 steps) */
export const MAX_DAY_GAP = 9000;

const CYCLE_YEARS = 400;
const CYCLE_DAYS = 146_097;
/** cron-parser's table of month lengths: a day-of-month field this long counts as `*` (February: 29) */
const PARSER_MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const monthDays = (year: number, month: number) => (month === 1 && !isLeap(year) ? 28 : PARSER_MONTH_DAYS[month]);

/** Whether a date fires, as cron-parser decides it (month 0–11, weekday 0 = Sunday); a string: why none can. */
export type DayMatcher = (year: number, month: number, day: number, weekday: number) => boolean;

/** The days an expression's day fields select, or why it fails on every day (an `L` weekday without its day). */
export function dayMatcher(fields: DayFields, texts: DayFieldTexts): DayMatcher | string {
  const months = new Set(fields.month);
  const days = new Set(fields.dayOfMonth.filter((d): d is number => typeof d === 'number'));
  const lastDay = fields.dayOfMonth.includes('L');
  const weekdays = new Set(fields.dayOfWeek.filter((d): d is number => typeof d === 'number'));
  const lastWeekdays = new Set<number>();
  for (const entry of fields.dayOfWeek) {
    if (typeof entry !== 'string') continue;
    const weekday = Number.parseInt(entry[0], 10) % 7;
    // cron-parser throws at every tick for an `L` without its weekday
    if (Number.isNaN(weekday))
      return `weekday field ${texts.dayOfWeek}: L needs a weekday before it (5L: the last Friday)`;
    lastWeekdays.add(weekday);
  }
  const anyWeekday = fields.dayOfWeek.length === 8; // cron-parser's test for `*` (0–7)
  const { nthDayOfWeek: nth } = fields;
  return (year, month, day, weekday) => {
    if (!months.has(month + 1)) return false;
    const length = monthDays(year, month);
    const anyDay = fields.dayOfMonth.length >= PARSER_MONTH_DAYS[month];
    const dayMatch = days.has(day) || (lastDay && day === length);
    const weekdayMatch = weekdays.has(weekday) || (lastWeekdays.has(weekday) && day + 7 > length);
    // both restricted: either one; one restricted: that one (cron-parser's order of tests)
    if (!dayMatch && (!weekdayMatch || anyWeekday)) return false;
    if (anyDay && !anyWeekday && !weekdayMatch) return false;
    return nth === 0 || Math.ceil(day / 7) === nth;
  };
}

/**
 * Why an expression's days never come (or come too rarely for gex to look that far ahead); undefined
 * when some day fires at least every MAX_DAY_GAP days. Cheap for every common expression: the
 * calendar is scanned only when nothing but the 29th–31st, or a `#n` weekday, is asked for.
 */
export function dayFieldsProblem(fields: DayFields, texts: DayFieldTexts): string | undefined {
  const matches = dayMatcher(fields, texts);
  if (typeof matches === 'string') return matches;
  const anyWeekday = fields.dayOfWeek.length === 8;
  const commonDay = fields.dayOfMonth.some((d) => d === 'L' || (typeof d === 'number' && d <= 28));
  // every month has each weekday (and a last one of each), and its days up to the 28th and its last
  if (fields.nthDayOfWeek === 0 && (!anyWeekday || commonDay)) return undefined;

  let first: number | undefined;
  let previous: number | undefined;
  let gap = 0;
  let index = 0; // days since 2000-01-01, a Saturday
  for (let year = 2000; year < 2000 + CYCLE_YEARS; year++)
    for (let month = 0; month < 12; month++)
      for (let day = 1, length = monthDays(year, month); day <= length; day++, index++) {
        if (!matches(year, month, day, (index + 6) % 7)) continue;
        if (previous !== undefined) gap = Math.max(gap, index - previous);
        first ??= index;
        previous = index;
      }
  const fieldsText = `day of month ${texts.dayOfMonth}, month ${texts.month} and weekday ${texts.dayOfWeek}`;
  if (first === undefined || previous === undefined) {
    if (anyWeekday && fields.nthDayOfWeek === 0) {
      const longest = Math.max(...fields.month.map((m) => PARSER_MONTH_DAYS[m - 1]));
      return `never fires: day of month ${texts.dayOfMonth} does not occur in month ${texts.month} (at most ${longest} days)`;
    }
    return `never fires: no date has ${fieldsText}`;
  }
  gap = Math.max(gap, first + CYCLE_DAYS - previous);
  if (gap > MAX_DAY_GAP)
    return `fires too rarely: days with ${fieldsText} can be ${Math.floor(gap / 365.25)} years apart (at most ${Math.floor(MAX_DAY_GAP / 365.25)})`;
  return undefined;
}
