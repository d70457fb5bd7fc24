import assert from 'node:assert/strict';
import nock from 'nock';
import { ApplicationError, UserError } from '../../../src/common/errors.js';
import { HttpConfigStore } from '../../../src/store/remote/http-config-store.js';
import {
  INTERACTIVE_STORE_RETRY,
  RetryBudget,
  retrySettingsFromEnv,
  RUN_STORE_RETRY,
  type Clock,
} from '../../../src/store/remote/retry-budget.js';

/** A clock that only moves when told to, or when the code under test sleeps. */
function fakeClock() {
  let now = 1_000_000;
  const slept: number[] = [];
  const clock: Clock & { advance(ms: number): void; elapsed(): number; slept: number[] } = {
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
    advance: (ms) => {
      now += ms;
    },
    elapsed: () => now - 1_000_000,
    slept,
  };
  return clock;
}

describe('store retry budget (injected clock, nothing sleeps)', () => {
  it('interactive: waits 0.5, 1, 2, 4, 8 s on instant failures, then gives up before 20 s', () => {
    const clock = fakeClock();
    const budget = new RetryBudget(INTERACTIVE_STORE_RETRY, clock);
    const delays: number[] = [];
    for (let retry = 1; ; retry++) {
      const delay = budget.delayBefore(retry);
      if (delay === null) break;
      delays.push(delay);
      clock.advance(delay);
    }
    assert.deepEqual(delays, [500, 1000, 2000, 4000, 8000]);
    assert.ok(clock.elapsed() <= INTERACTIVE_STORE_RETRY.totalMs);
  });

  it('interactive: attempts that hang until their timeout still end within 20 s (the last one is cut short)', () => {
    const clock = fakeClock();
    const budget = new RetryBudget(INTERACTIVE_STORE_RETRY, clock);
    const timeouts: number[] = [];
    for (let retry = 1; ; retry++) {
      timeouts.push(budget.attemptTimeoutMs());
      clock.advance(budget.attemptTimeoutMs()); // the server never answers
      const delay = budget.delayBefore(retry);
      if (delay === null) break;
      clock.advance(delay);
    }
    assert.deepEqual(timeouts, [10_000, 9_500]);
    assert.equal(clock.elapsed(), 20_000);
  });

  it("run: the official client's 11 retries, but never more than 10 minutes, even when every attempt hangs", () => {
    for (const attemptMs of [0, 1_000, RUN_STORE_RETRY.attemptTimeoutMs]) {
      const clock = fakeClock();
      const budget = new RetryBudget(RUN_STORE_RETRY, clock);
      let attempts = 0;
      for (let retry = 1; ; retry++) {
        attempts++;
        clock.advance(Math.min(attemptMs, budget.attemptTimeoutMs()));
        const delay = budget.delayBefore(retry);
        if (delay === null) break;
        clock.advance(delay);
      }
      assert.ok(clock.elapsed() <= 600_000, `${clock.elapsed()} ms with attempts of ${attemptMs} ms`);
      assert.ok(attempts >= 2 && attempts <= 12, `${attempts} attempts`);
    }
  });

  it('the connect timeout never outlasts the budget', () => {
    const clock = fakeClock();
    const budget = new RetryBudget(INTERACTIVE_STORE_RETRY, clock);
    assert.equal(budget.connectTimeoutMs(), 5_000);
    clock.advance(18_000);
    assert.equal(budget.connectTimeoutMs(), 2_000);
  });

  it('GEX_STORE_TIMEOUT replaces the total, in seconds; nonsense is refused', () => {
    assert.equal(retrySettingsFromEnv(RUN_STORE_RETRY, { GEX_STORE_TIMEOUT: '3' }).totalMs, 3_000);
    assert.equal(retrySettingsFromEnv(INTERACTIVE_STORE_RETRY, { GEX_STORE_TIMEOUT: '0.5' }).totalMs, 500);
    assert.equal(retrySettingsFromEnv(INTERACTIVE_STORE_RETRY, {}), INTERACTIVE_STORE_RETRY);
    for (const value of ['0', '-1', 'soon', '1e9']) {
      assert.throws(
        () => retrySettingsFromEnv(RUN_STORE_RETRY, { GEX_STORE_TIMEOUT: value }),
        /^UserError: GEX_STORE_TIMEOUT must be a number of seconds/,
      );
    }
  });
});

describe('HTTP config store client within its budget (injected clock)', () => {
  const URL = 'http://storage.test';
  afterEach(() => nock.cleanAll());

  it('an unreachable store (a refused port): one user error naming the address and the attempts, within the interactive budget', async () => {
    const clock = fakeClock();
    const client = new HttpConfigStore({
      url: 'http://127.0.0.1:1',
      token: 't',
      retry: INTERACTIVE_STORE_RETRY,
      clock,
    });
    await assert.rejects(client.verifyToken(), (e: Error) => {
      assert.ok(e instanceof UserError);
      assert.equal(
        e.message,
        'The Storage API at http://127.0.0.1:1 cannot be reached: connect ECONNREFUSED 127.0.0.1:1 (6 attempts in 15.5 s)',
      );
      return true;
    });
    assert.deepEqual(clock.slept, [500, 1000, 2000, 4000, 8000]);
    assert.ok(clock.elapsed() <= 20_000);
  });

  it('a store that answers slowly: attempts taking their whole timeout end the call at the budget', async () => {
    const clock = fakeClock();
    let attempts = 0;
    nock(URL)
      .get('/v2/storage/tokens/verify')
      .times(20)
      .reply(() => {
        attempts++;
        clock.advance(10_000); // as if each attempt had hung until its timeout
        return [503, { error: 'busy' }];
      });
    const client = new HttpConfigStore({ url: URL, token: 't', retry: INTERACTIVE_STORE_RETRY, clock });
    await assert.rejects(
      client.verifyToken(),
      (e: Error) => e instanceof ApplicationError && /\[503\] busy \(2 attempts in 20\.5 s\)/.test(e.message),
    );
    assert.equal(attempts, 2);
  });

  it('retries until the store is back within the budget', async () => {
    const clock = fakeClock();
    nock(URL)
      .get('/v2/storage/tokens/verify')
      .times(3)
      .reply(502, 'Bad Gateway')
      .get('/v2/storage/tokens/verify')
      .reply(200, { id: '1', owner: { id: '2', name: 'p' } });
    const client = new HttpConfigStore({ url: URL, token: 't', retry: RUN_STORE_RETRY, clock });
    assert.equal((await client.verifyToken()).projectId, 2);
    assert.deepEqual(clock.slept, [1000, 2000, 4000]);
  });
});
