import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { AdaptiveConcurrency } from '../../../src/extractor/http/adaptive-concurrency.js';

describe('adaptive concurrency (AIMD)', () => {
  it('halves on throttling, once per round, and grows by one per round of successes', () => {
    const clock = 1_000;
    const limiter = new AdaptiveConcurrency(8, () => clock);
    const round = clock;
    limiter.throttled(round);
    assert.equal(limiter.current, 4);
    limiter.throttled(round - 1);
    assert.equal(limiter.current, 4, 'a response from before the cut does not cut again');
    for (let i = 0; i < 4; i++) limiter.succeeded();
    assert.equal(limiter.current, 5, '+1 after a round of 4 successes');
    for (let i = 0; i < 100; i++) limiter.succeeded();
    assert.equal(limiter.current, 8, 'never above the maximum');
  });

  it('never goes below one request', () => {
    let clock = 1_000;
    const limiter = new AdaptiveConcurrency(2, () => clock);
    limiter.throttled(clock);
    clock += 2;
    limiter.throttled(clock);
    assert.equal(limiter.current, 1);
    clock += 2;
    limiter.throttled(clock);
    assert.equal(limiter.current, 1);
    assert.deepEqual(limiter.changes, [{ at: 1_000, limit: 1 }]);
  });

  it('keeps at most the current limit of attempts running', async () => {
    const limiter = new AdaptiveConcurrency(3);
    let running = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 12 }, () =>
        limiter.run(async () => {
          running++;
          peak = Math.max(peak, running);
          await sleep(5);
          running--;
        }),
      ),
    );
    assert.equal(peak, 3);
  });
});
