import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/common/logger.js';
import { JobLogCollector } from '../../src/jobs/job-log.js';

/** What a job's `gex run` writes: its logger's JSON lines (job-run-contract.ts). */
function runOutput(write: (logger: ReturnType<typeof createLogger>) => void): { out: string; err: string } {
  let out = '';
  let err = '';
  const sink = (add: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        add(chunk.toString());
        done();
      },
    });
  const logger = createLogger({
    format: 'json',
    stdout: sink((t) => (out += t)),
    stderr: sink((t) => (err += t)),
  });
  write(logger);
  return { out, err };
}

describe("a job's log: its run's lines as events", () => {
  it('keeps the message, level and time of each line once (no time or level repeated in the message)', () => {
    const { out, err } = runOutput((logger) => {
      logger.child({ configId: 'shop', rowId: 'users' }).info({ records: 2 }, 'Job users finished: 2 records');
      logger.warn('careful');
      logger.error({ err: new Error('boom'), code: 'GEX_X' }, 'Run failed: boom');
    });
    const log = new JobLogCollector();
    const at = new Date('2030-01-01T00:00:00Z');
    // chunks split anywhere, the two streams interleaved
    log.write('stdout', out.slice(0, 7), at);
    log.write('stderr', err.slice(0, 30), at);
    log.write('stdout', out.slice(7), at);
    log.write('stderr', err.slice(30), at);
    const events = log.take(true, at);
    assert.deepEqual(
      events.map((e) => [e.level, e.message]),
      [
        ['info', 'Job users finished: 2 records'],
        ['warning', 'careful'],
        ['error', 'Run failed: boom'],
      ],
    );
    for (const event of events) {
      assert.notEqual(event.created, at.toISOString(), "the line's own time");
      assert.ok(!/\d\d:\d\d:\d\d|INFO|WARN|configId|records=/.test(event.message), event.message);
    }
  });

  it('keeps any other line as it came (node warnings, a crash report), naming its level when it starts with one', () => {
    const log = new JobLogCollector();
    log.write('stderr', '(node:12) Warning: something\nFATAL ERROR: Reached heap limit\n{"not":"a log line"}\n\n  \n');
    assert.deepEqual(
      log.take().map((e) => [e.level, e.message]),
      [
        ['info', '(node:12) Warning: something'],
        ['error', 'FATAL ERROR: Reached heap limit'],
        ['info', '{"not":"a log line"}'],
      ],
    );
  });

  it('cuts a long message after reading its whole JSON line, and bounds the log', () => {
    const log = new JobLogCollector({ lines: 3, bytes: 10_000, lineChars: 50 });
    const long = JSON.stringify({ level: 'info', time: new Date().toISOString(), msg: 'x'.repeat(300) });
    log.write('stdout', `${long}\n`);
    const [cut] = log.take();
    assert.equal(cut.message, `${'x'.repeat(50)}… (line cut)`);
    for (let i = 0; i < 5; i++) log.write('stdout', `line ${i}\n`);
    const rest = log.take(true);
    assert.deepEqual(
      rest.map((e) => e.message),
      ['line 0', 'line 1', 'Log cut: 3 more lines were not kept (a job keeps at most 3 lines, 10000 bytes).'],
    );
    // a line that never ends is not held without bound
    const endless = new JobLogCollector({ lines: 10, bytes: 1_000_000, lineChars: 10 });
    endless.write('stdout', 'y'.repeat(10_000));
    assert.equal(endless.take()[0]?.message, `${'y'.repeat(10)}… (line cut)`);
  });
});
