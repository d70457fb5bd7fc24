import assert from 'node:assert/strict';
import { calculateRetryDelay } from '../../src/common/retry-delay.js';

describe('calculateRetryDelay (the one retry rule of the HTTP client and the remote store)', () => {
  const base = { retryable: true, maxRetries: 3, backoffBaseMs: 1000 };

  it('doubles the backoff from the base, up to maxRetries retries', () => {
    assert.deepEqual(
      [1, 2, 3].map((attempt) => calculateRetryDelay({ ...base, attempt })?.ms),
      [1000, 2000, 4000],
    );
    assert.equal(calculateRetryDelay({ ...base, attempt: 4 }), null);
  });

  it('never retries a failure that is not retryable', () => {
    assert.equal(calculateRetryDelay({ ...base, attempt: 1, retryable: false }), null);
  });

  it('takes a positive wait the server asked for instead of the backoff', () => {
    assert.deepEqual(calculateRetryDelay({ ...base, attempt: 2, requestedMs: 7000 }), { ms: 7000, source: 'header' });
    assert.deepEqual(calculateRetryDelay({ ...base, attempt: 2, requestedMs: 0 }), { ms: 2000, source: 'backoff' });
    assert.deepEqual(calculateRetryDelay({ ...base, attempt: 2, requestedMs: -5 }), { ms: 2000, source: 'backoff' });
  });

  it('gives up when the wait leaves no room for another attempt within the budget', () => {
    assert.equal(calculateRetryDelay({ ...base, attempt: 2, remainingMs: 2400, minAttemptMs: 500 }), null);
    assert.deepEqual(calculateRetryDelay({ ...base, attempt: 2, remainingMs: 2500, minAttemptMs: 500 }), {
      ms: 2000,
      source: 'backoff',
    });
  });
});
