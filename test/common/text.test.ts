import assert from 'node:assert/strict';
import { DatabaseUnavailable } from '../../src/store/sql/database.js';
import { formatClockTime, formatDuration, groupThousands, plural, sentence } from '../../src/common/text.js';

describe('text helpers', () => {
  it('groups thousands like toLocaleString("en") does for counts', () => {
    for (const n of [0, 7, 999, 1000, 12345, 1234567, -1234, 1001001])
      assert.equal(groupThousands(n), n.toLocaleString('en'));
    assert.equal(groupThousands(1234.5678), '1,234.5678');
  });

  it('pluralises nouns', () => {
    assert.equal(plural(1, 'page'), '1 page');
    assert.equal(plural(100000, 'record'), '100,000 records');
    assert.equal(plural(2, 'entry', 'entries'), '2 entries');
  });

  it('ends a sentence once, whatever the text ends with, so that joined messages never show ".."', () => {
    assert.equal(sentence('Configuration a already exists.'), 'Configuration a already exists.');
    assert.equal(sentence('exists'), 'exists.');
    assert.equal(sentence('really? '), 'really?');
    assert.equal(sentence('wait…'), 'wait…');
    assert.equal(sentence('stop!'), 'stop!');
    // the messages that join another error's message with a sentence of their own
    const joined = new DatabaseUnavailable('connection refused.', 'postgres://db/x').message;
    assert.ok(!joined.includes('..'), joined);
    assert.match(joined, /connection refused\. Nothing was changed/);
  });

  it('says spans and clock times the way a person reads them', () => {
    assert.deepEqual([800, 45_000, 60_000, 1_023_000, 3_600_000, 7_500_000].map(formatDuration), [
      '800 ms',
      '45 s',
      '1 min',
      '17 min 3 s',
      '1 h',
      '2 h 5 min',
    ]);
    const now = new Date(2026, 10, 21, 12, 0, 0).getTime();
    assert.equal(formatClockTime(now + 1_023_000, now), '12:17:03');
    assert.equal(formatClockTime(now + 13 * 3_600_000, now), '2026-11-22 01:00:00');
  });
});
