import assert from 'node:assert/strict';
import { fitWidth, ProgressLine } from '../../src/common/progress-line.js';
import { formatClock, formatSeconds, plural } from '../../src/common/text.js';
import { manualClock, ttySink as terminal } from '../support/tty-sink.js';

describe('progress formatting', () => {
  it('formats elapsed time as a clock and seconds with grouped thousands', () => {
    assert.equal(formatClock(0), '0:00');
    assert.equal(formatClock(7_999), '0:07');
    assert.equal(formatClock(754_000), '12:34');
    assert.equal(formatClock(3_723_000), '1:02:03');
    assert.equal(formatClock(3_600_000 * 1234), '1,234:00:00');
    assert.equal(formatSeconds(1_234_567), '1,234.6 s');
    assert.equal(formatSeconds(50), '0.1 s');
  });

  it('says "1 request", not "1 requests", and groups thousands in counts', () => {
    assert.equal(plural(1, 'request'), '1 request');
    assert.equal(plural(12_345, 'row'), '12,345 rows');
  });

  it('cuts a line wider than the terminal so that \\r can rewrite it', () => {
    assert.equal(fitWidth('abcdef', 5), 'abc…');
    assert.equal(fitWidth('abcd', 5), 'abcd');
    assert.equal(fitWidth('abcdef', undefined), 'abcdef', 'unknown width: as it is');
    assert.equal(fitWidth('abcdef', 0), 'abcdef');
  });
});

describe('ProgressLine (injected clock)', () => {
  it('draws at most once per interval unless forced, each draw returning to the line start', () => {
    const out = terminal();
    const clock = manualClock();
    const line = new ProgressLine(out.stream, { minIntervalMs: 100, now: clock.now });
    line.update('one');
    line.update('two'); // same moment: skipped
    clock.advance(99);
    line.update('three'); // still too soon
    clock.advance(1);
    line.update('four');
    line.update('five', true);
    line.clear();
    assert.deepEqual(out.chunks, ['\r\x1b[Kone', '\r\x1b[Kfour', '\r\x1b[Kfive', '\r\x1b[K']);
  });

  it('cuts the line to the terminal width', () => {
    const out = terminal(10);
    new ProgressLine(out.stream).update('0123456789abcdef');
    assert.equal(out.text(), '\r\x1b[K01234567…');
  });
});
