import assert from 'node:assert/strict';
import { ProgressLine } from '../../src/common/progress-line.js';
import { etaMs, formatProgress, RunProgress } from '../../src/extractor/run-progress.js';
import { manualClock, ttySink as terminal } from '../support/tty-sink.js';

describe('progress text', () => {
  it('shows elapsed time, pages, records and the rate, with thousands separators', () => {
    const text = formatProgress({ job: 'users', elapsedMs: 12_000, pages: 1_200, records: 123_456 });
    assert.equal(text, '[0:12] users: 1,200 pages, 123,456 records, 10,288 records/s');
  });

  it('says "1 page, 1 record" and shows no rate before any time has passed', () => {
    assert.equal(
      formatProgress({ job: 'u', elapsedMs: 0, pages: 1, records: 1 }),
      '[0:00] u: 1 page, 1 record, 0 records/s',
    );
  });

  it('shows an ETA only when the total is known', () => {
    assert.equal(etaMs(100, undefined, 10), undefined);
    assert.equal(etaMs(100, 1_000, 0), undefined, 'no rate yet: no ETA');
    assert.equal(etaMs(100, 1_000, 10), 90_000);
    assert.equal(etaMs(2_000, 1_000, 10), 0, 'past the total: nothing left');
    const text = formatProgress({ job: 'users', elapsedMs: 10_000, pages: 10, records: 1_000, expectedRecords: 7_000 });
    assert.equal(text, '[0:10] users: 10 pages, 1,000 records, 100 records/s, ETA 1:00');
  });
});

describe('RunProgress (injected clock)', () => {
  it('counts pages and records of every job and draws the live line', () => {
    const out = terminal();
    const clock = manualClock();
    const progress = new RunProgress(new ProgressLine(out.stream, { minIntervalMs: 0, now: clock.now }), {
      now: clock.now,
      tickMs: 0,
    });
    clock.advance(2_000);
    progress.page('users', 1_000);
    clock.advance(2_000);
    progress.page('users (users/1/orders)', 3_000);
    assert.equal(progress.pages, 2);
    assert.equal(progress.records, 4_000, 'child records count too');
    assert.equal(progress.elapsedMs, 4_000);
    progress.done();
    assert.deepEqual(out.chunks, [
      '\r\x1b[K[0:02] users: 1 page, 1,000 records, 500 records/s',
      '\r\x1b[K[0:04] users (users/1/orders): 2 pages, 4,000 records, 1,000 records/s',
      '\r\x1b[K',
    ]);
  });

  it('shows a hostile job label as one safe token (no escape sequence reaches the terminal)', () => {
    const out = terminal();
    const clock = manualClock();
    const progress = new RunProgress(new ProgressLine(out.stream, { minIntervalMs: 0, now: clock.now }), {
      now: clock.now,
      tickMs: 0,
    });
    progress.page('users\x1b[2J\rfake', 1);
    progress.done();
    assert.ok(!out.chunks[0].slice('\r\x1b[K'.length).includes('\x1b'), JSON.stringify(out.chunks[0]));
    assert.match(out.chunks[0], /"users\\u001b\[2J\\rfake": 1 page/);
  });

  it('takes a total through its ETA hook', () => {
    const clock = manualClock();
    const progress = new RunProgress(undefined, { now: clock.now });
    progress.expectRecords(500);
    clock.advance(1_000);
    progress.page('users', 100);
    assert.equal(formatProgress(progress.snapshot()), '[0:01] users: 1 page, 100 records, 100 records/s, ETA 0:04');
  });

  it('draws nothing when the stream is not a terminal', () => {
    const out = terminal();
    const line = new ProgressLine(Object.assign(out.stream, { isTTY: false }));
    const progress = new RunProgress(line, { tickMs: 0 });
    progress.page('users', 5);
    progress.done();
    assert.equal(out.text(), '');
  });
});
