import { UserError } from '../../common/errors.js';
import { excerptQuoted } from '../../common/log-text.js';
import { timestamp } from '../identifiers.js';

/**
 * Moments of `changedSince` / `changedUntil` / `changed_since` and how they meet the `_timestamp`
 * of rows. `_timestamp` is text (`2025-01-31T12:00:00+0000`): always UTC, fixed width for the years
 * 0000 to 9999, so in byte order its text sorts as its moment. A moment outside those years has no
 * such text and is not compared at all: every row changed after a moment before year 0 and before
 * one after year 9999.
 */

/** 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z: the moments `_timestamp` text can hold lie between. */
const FIRST_STORED_MS = -62_167_219_200_000;
const AFTER_LAST_STORED_MS = 253_402_300_800_000;
/** JavaScript's Date covers ±8.64e15 ms; a moment beyond is clamped to that bound (still outside the years above). */
const DATE_LIMIT_MS = 8.64e15;

/** Where `moment` lies against every row's `_timestamp`: before all of them, after all of them, or at this text. */
export type StoredMoment = { readonly text: string } | { readonly beyond: 'before' | 'after' };

export function storedMoment(moment: Date): StoredMoment {
  const ms = moment.getTime();
  if (Number.isNaN(ms)) throw new RangeError('an invalid Date is not a moment');
  if (ms < FIRST_STORED_MS) return { beyond: 'before' };
  if (ms >= AFTER_LAST_STORED_MS) return { beyond: 'after' };
  return { text: timestamp(moment) };
}

const UNITS: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86_400, week: 604_800 };

const clamped = (ms: number): Date => new Date(Math.min(Math.max(ms, -DATE_LIMIT_MS), DATE_LIMIT_MS));

const ISO = /^(\d{4})-(\d{2})-(\d{2})([T ](\d{2}):(\d{2})(:(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** Whether year-month-day is a day of the proleptic Gregorian calendar (JavaScript rolls 2025-02-30 over to March). */
function isCalendarDay(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return day <= days;
}

/**
 * A `changedSince` / `changed_since` value as Keboola takes it: a Unix timestamp, an ISO 8601 date
 * or date-time, or a relative `-N unit(s)` (seconds to weeks) counted back from `now`. Always a
 * valid Date: a moment beyond what a Date holds (`-999999999 weeks`) is clamped to its bound, which
 * selects the same rows. Anything else is a UserError naming `where` and the value.
 */
export function parseChangedSince(value: string, now: Date = new Date(), where = 'changedSince'): Date {
  const text = value.trim();
  if (/^\d{1,20}$/.test(text)) return clamped(Number(text) * 1000);
  const relative = /^-\s*(\d{1,9})\s*(second|minute|hour|day|week)s?$/i.exec(text);
  if (relative) return clamped(now.getTime() - Number(relative[1]) * UNITS[relative[2].toLowerCase()] * 1000);
  const iso = ISO.exec(text);
  if (iso && isCalendarDay(Number(iso[1]), Number(iso[2]), Number(iso[3]))) {
    // a date or date-time without a zone is UTC, as everything the store records
    const normal =
      text.length === 10 ? `${text}T00:00:00Z` : text.replace(' ', 'T').replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
    const date = new Date(/(Z|[+-]\d{2}:\d{2})$/.test(normal) ? normal : `${normal}Z`);
    if (!Number.isNaN(date.getTime())) return date;
  }
  throw new UserError(
    'GEX_TABLE_REQUEST_INVALID',
    `${where} ${excerptQuoted(value)} is not a moment: give a Unix timestamp, an ISO 8601 date (2025-01-31 or 2025-01-31T12:00:00Z) or a relative "-2 days".`,
  );
}
