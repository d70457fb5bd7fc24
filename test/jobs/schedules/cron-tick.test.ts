import assert from 'node:assert/strict';
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
