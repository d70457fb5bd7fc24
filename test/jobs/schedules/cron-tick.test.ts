import assert from 'node:assert/strict';
import cronParser from 'cron-parser';
import { dayMatcher, type DayMatcher } from '../../../src/jobs/schedules/cron-calendar.js';
import { cronTicks, CronProblem, isKnownTimeZone } from '../../../src/jobs/schedules/cron-tick.js';
import { graceOf } from '../../../src/jobs/schedules/schedule-ticker.js';

const at = (iso: string) => new Date(iso);
const iso = (d: Date | undefined) => d?.toISOString();

/** the ticks after `from`, `n` of them */
function ticksFrom(expression: string, zone: string, from: string, n: number): string[] {
  const ticks = cronTicks(expression, zone);
  const found: string[] = [];
  let t: Date | undefined = at(from);
  for (let i = 0; i < n && t; i++) {
    t = ticks.nextAfter(t);
    if (t) found.push(t.toISOString());
  }
  return found;
}

describe('schedule tick arithmetic (fake clocks)', () => {
  it('the latest tick at or before now includes now itself', () => {
    const ticks = cronTicks('0 * * * *', 'UTC');
    assert.equal(iso(ticks.latestAtOrBefore(at('2026-05-01T10:00:00.000Z'))), '2026-05-01T10:00:00.000Z');
    assert.equal(iso(ticks.latestAtOrBefore(at('2026-05-01T10:59:59.999Z'))), '2026-05-01T10:00:00.000Z');
    assert.equal(iso(ticks.nextAfter(at('2026-05-01T10:00:00.000Z'))), '2026-05-01T11:00:00.000Z');
  });

  it('*/n, ranges, lists and a seconds field', () => {
    assert.deepEqual(ticksFrom('*/20 * * * *', 'UTC', '2026-05-01T10:05:00Z', 3), [
      '2026-05-01T10:20:00.000Z',
      '2026-05-01T10:40:00.000Z',
      '2026-05-01T11:00:00.000Z',
    ]);
    assert.deepEqual(ticksFrom('0 9-11 * * 1-5', 'UTC', '2026-05-01T10:30:00Z', 3), [
      '2026-05-01T11:00:00.000Z', // Friday
      '2026-05-04T09:00:00.000Z', // Monday: the weekend is skipped
      '2026-05-04T10:00:00.000Z',
    ]);
    assert.deepEqual(ticksFrom('15,45 6 * * *', 'UTC', '2026-05-01T06:20:00Z', 2), [
      '2026-05-01T06:45:00.000Z',
      '2026-05-02T06:15:00.000Z',
    ]);
    assert.deepEqual(ticksFrom('*/3 * * * * *', 'UTC', '2026-05-01T06:00:01Z', 3), [
      '2026-05-01T06:00:03.000Z',
      '2026-05-01T06:00:06.000Z',
      '2026-05-01T06:00:09.000Z',
    ]);
  });

  it('a time zone moves the ticks: 06:30 in Prague is 04:30 UTC in summer, 05:30 in winter', () => {
    assert.deepEqual(ticksFrom('30 6 * * *', 'Europe/Prague', '2026-07-01T00:00:00Z', 1), ['2026-07-01T04:30:00.000Z']);
    assert.deepEqual(ticksFrom('30 6 * * *', 'Europe/Prague', '2026-12-01T00:00:00Z', 1), ['2026-12-01T05:30:00.000Z']);
  });

  it('spring forward (Prague, 2026-03-29): hourly ticks skip the missing 02:00 and stay an hour apart in UTC', () => {
    const ticks = ticksFrom('0 * * * *', 'Europe/Prague', '2026-03-28T23:30:00Z', 4);
    // 00:00 and 01:00 CET (UTC+1), then 03:00 CEST (UTC+2): local 02:00 does not exist
    assert.deepEqual(ticks, [
      '2026-03-29T00:00:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-29T02:00:00.000Z',
      '2026-03-29T03:00:00.000Z',
    ]);
    const unique = new Set(ticks);
    assert.equal(unique.size, ticks.length, 'no tick twice');
  });

  it('a daily tick in the skipped hour fires an hour later that day (03:30), once; the days around keep 02:30', () => {
    assert.deepEqual(ticksFrom('30 2 * * *', 'Europe/Prague', '2026-03-27T12:00:00Z', 3), [
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:30:00.000Z', // 03:30 CEST: local 02:30 did not exist
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ]);
  });

  it('a daily tick in the repeated hour (fall back) fires once', () => {
    assert.deepEqual(ticksFrom('30 2 * * *', 'Europe/Prague', '2026-10-24T12:00:00Z', 2), [
      '2026-10-25T00:30:00.000Z', // the first 02:30 (CEST); the second one (CET) does not fire
      '2026-10-26T01:30:00.000Z',
    ]);
  });

  it('fall back (Prague, 2026-10-25): an hourly schedule fires every real hour, the repeated 02:00 included', () => {
    assert.deepEqual(ticksFrom('0 * * * *', 'Europe/Prague', '2026-10-24T22:30:00Z', 5), [
      '2026-10-24T23:00:00.000Z', // 01:00 CEST
      '2026-10-25T00:00:00.000Z', // 02:00 CEST
      '2026-10-25T01:00:00.000Z', // 02:00 CET
      '2026-10-25T02:00:00.000Z', // 03:00 CET
      '2026-10-25T03:00:00.000Z',
    ]);
  });

  it('refuses what is not a cron expression or a time zone, saying which', () => {
    assert.throws(() => cronTicks('61 * * * *', 'UTC'), CronProblem);
    assert.throws(() => cronTicks('* * *', 'UTC'), /expected 5 fields/);
    assert.throws(() => cronTicks('', 'UTC'), /at most 200 characters/);
    assert.throws(() => cronTicks('* * * * *', 'Mars/Olympus'), /unknown time zone/);
    assert.equal(isKnownTimeZone('Europe/Prague'), true);
    assert.equal(isKnownTimeZone('../etc/passwd'), false);
    assert.equal(isKnownTimeZone('x'.repeat(100)), false);
  });

  it('the grace of a tick: its period, at least 5 s, at most 60 s', () => {
    assert.equal(graceOf(cronTicks('*/2 * * * * *', 'UTC'), at('2026-05-01T00:00:00Z')), 5000);
    assert.equal(graceOf(cronTicks('*/20 * * * * *', 'UTC'), at('2026-05-01T00:00:00Z')), 20_000);
    assert.equal(graceOf(cronTicks('0 * * * *', 'UTC'), at('2026-05-01T00:00:00Z')), 60_000);
  });
});

describe('cron expressions whose days never come (fake clocks)', () => {
  const problem = (expression: string) => cronTicks(expression, 'Europe/Prague').never;

  it('a day of month no listed month has never fires, and says which fields', () => {
    assert.equal(
      problem('0 0 31 4,6,9,11 *'),
      'never fires: day of month 31 does not occur in month 4,6,9,11 (at most 30 days)',
    );
    assert.equal(problem('0 0 30,31 2,4 *'), undefined, 'April 30 exists');
    assert.equal(problem('0 0 31 2,4 *'), 'never fires: day of month 31 does not occur in month 2,4 (at most 30 days)');
    assert.equal(
      problem('0 0 31 FEB,APR *'),
      'never fires: day of month 31 does not occur in month FEB,APR (at most 30 days)',
    );
    // cron-parser refuses a single short month itself
    assert.throws(() => cronTicks('0 0 31 4 *', 'UTC'), CronProblem);
    assert.throws(() => cronTicks('0 0 30 2 *', 'UTC'), CronProblem);
  });

  it('what does fire: leap days, the last day, weekdays with a day of month (either one fires)', () => {
    for (const fires of [
      '0 0 29 2 *', // every 4 years (8 across 2100)
      '0 0 L 2 *',
      '0 0 * * 5L',
      '0 0 31 4,6,9,11 1', // day 31 or a Monday: the Mondays
      '0 0 31 4,6,9,11 0-6', // 0-6 is not "*" for cron-parser: every day of those months
      '0 0 * * 1#5', // a fifth Monday comes every few months
      '0 0 * 3 1#5',
      '*/5 * 30 * *',
    ])
      assert.equal(problem(fires), undefined, fires);
  });

  it('refuses days decades apart (beyond the ~27 years cron-parser searches) and an L weekday without its day', () => {
    assert.match(
      String(problem('0 0 * 2 1#5')),
      /^fires too rarely: days with day of month \*, month 2 and weekday 1#5 can be \d+ years apart/,
    );
    assert.match(String(problem('0 0 * * L')), /weekday field L: L needs a weekday before it/);
  });

  it('a never-firing expression answers at once, without asking cron-parser (which would walk 10,000 days)', () => {
    const ticks = cronTicks('0 0 31 4,6,9,11 *', 'Europe/Prague');
    assert.equal(ticks.nextAfter(at('2026-05-01T00:00:00Z')), undefined);
    assert.equal(ticks.latestAtOrBefore(at('2026-05-01T00:00:00Z')), undefined);
  });

  it('the calendar rules are cron-parser’s: the days it fires from November 2027 to April 2028 are the days selected', function () {
    this.timeout(60_000);
    const expressions: string[] = [];
    for (const day of ['*', '15,31', '29-31', 'L', '31'])
      for (const month of ['*', '2', '4,6,9,11'])
        for (const weekday of ['*', '1', '0-6', '5L', '3#2', '1#5']) expressions.push(`0 0 ${day} ${month} ${weekday}`);
    // months of 30 and 31 days, and a leap February
    const start = Date.UTC(2027, 10, 1);
    const end = Date.UTC(2028, 4, 1);
    for (const expression of expressions) {
      let parsed;
      try {
        parsed = cronParser.parseExpression(expression, {
          currentDate: new Date(start - 1),
          endDate: new Date(end - 1),
          tz: 'UTC',
        });
      } catch {
        continue; // refused by cron-parser itself
      }
      const [dayOfMonth, month, dayOfWeek] = expression.split(' ').slice(2);
      const nth = dayOfWeek.includes('#') ? Number(dayOfWeek.split('#')[1]) : 0;
      const matches = dayMatcher({ ...parsed.fields, nthDayOfWeek: nth }, { dayOfMonth, month, dayOfWeek });
      assert.equal(typeof matches, 'function', expression);
      const expected: string[] = [];
      for (let t = start; t < end; t += 86_400_000) {
        const d = new Date(t);
        if ((matches as DayMatcher)(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCDay()))
          expected.push(d.toISOString());
      }
      const fired: string[] = [];
      for (;;) {
        try {
          fired.push(parsed.next().toDate().toISOString());
        } catch {
          break; // past endDate (or cron-parser's loop limit: then the lists differ)
        }
      }
      assert.deepEqual(fired, expected, expression);
      if (expected.length > 0) assert.equal(cronTicks(expression, 'UTC').never, undefined, expression);
    }
  });
});
