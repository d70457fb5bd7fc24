import assert from 'node:assert/strict';
import { jobView } from '../../src/cli/jobs/job-view.js';
import { elapsed, PROGRESS_EVERY_MS, WaitProgress } from '../../src/cli/jobs/wait-progress.js';
import { fromPlain } from '../../src/json/index.js';

const job = (status: string) => jobView(fromPlain({ id: '12', status }))!;

describe('gex jobs run --wait: progress on stderr', () => {
  it('a line per status change; while it stays, one at most every interval with the time and newest log line', async () => {
    let now = 1_000_000;
    const lines: string[] = [];
    let asked = 0;
    const progress = new WaitProgress(
      (line) => lines.push(line),
      () => now,
    );
    const newest = (text: string | undefined) => () => {
      asked++;
      return Promise.resolve(text);
    };
    await progress.seen(job('created'), newest('x'));
    now += 500;
    await progress.seen(job('processing'), newest('x'));
    now += PROGRESS_EVERY_MS - 1;
    await progress.seen(job('processing'), newest('x'));
    assert.equal(asked, 0, 'the log is not read before a progress line is due');
    now += 1;
    await progress.seen(job('processing'), newest('a'.repeat(200)));
    now += 1000;
    await progress.seen(job('processing'), newest('x'));
    now += PROGRESS_EVERY_MS;
    await progress.seen(job('processing'), newest('evil \u001b[2J line'));
    await progress.seen(job('success'), newest('x'));
    assert.deepEqual(lines, [
      'Job 12: created',
      'Job 12: processing',
      `Job 12: processing, waited 12s; last log line: ${'a'.repeat(100)}…`,
      'Job 12: processing, waited 25s; last log line: "evil \\u001b[2J line"',
      'Job 12: success',
    ]);
    assert.equal(asked, 2);
  });

  it('a job without log lines yet: the time only', async () => {
    let now = 0;
    const lines: string[] = [];
    const progress = new WaitProgress(
      (line) => lines.push(line),
      () => now,
    );
    await progress.seen(job('waiting'), () => Promise.resolve(undefined));
    now = 61_000 + PROGRESS_EVERY_MS;
    await progress.seen(job('waiting'), () => Promise.resolve(undefined));
    assert.deepEqual(lines, ['Job 12: waiting', 'Job 12: waiting, waited 1m13s']);
    assert.equal(elapsed(3_599_000), '59m59s');
  });
});
