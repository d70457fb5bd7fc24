import assert from 'node:assert/strict';
import nock from 'nock';
import { silentLogger } from '../../../src/common/logger.js';
import { DEFAULT_RETRY } from '../../../src/extractor/config/api-settings.js';
import { HttpClient } from '../../../src/extractor/http/http-client.js';
import { RateLimiter, rateLimitPauseMs } from '../../../src/extractor/http/rate-limiter.js';
import { RetryPolicy } from '../../../src/extractor/http/retry-policy.js';

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);

/** A clock that only moves when told to. */
function fakeClock(start = NOW) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** Send times of `count` requests reserved at once (concurrent callers), relative to the start. */
function reserveAll(limiter: RateLimiter, count: number): number[] {
  return Array.from({ length: count }, () => limiter.reserve());
}

describe('RateLimiter (token bucket as a schedule)', () => {
  it('spaces requests 1/rate apart, shared by concurrent callers', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ ratePerSecond: 4, now: clock.now });
    assert.deepEqual(reserveAll(limiter, 5), [0, 250, 500, 750, 1000]);
  });

  it('takes fractional rates: 0.5 per second is one request every 2 s', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ ratePerSecond: 0.5, now: clock.now });
    assert.equal(limiter.reserve(), 0);
    clock.advance(500);
    assert.equal(limiter.reserve(), 1500);
    clock.advance(10_000);
    assert.equal(limiter.reserve(), 0, 'after an idle period the next request goes at once');
  });

  it('lets a burst go at once after an idle period, then keeps the rate', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ ratePerSecond: 10, burst: 3, now: clock.now });
    assert.deepEqual(reserveAll(limiter, 5), [0, 0, 0, 100, 200]);
    clock.advance(1000);
    // idle long enough to refill the whole burst, and no more
    assert.deepEqual(reserveAll(limiter, 4), [0, 0, 0, 100]);
  });

  it('never lets more than rate × window + burst requests start in any window', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ ratePerSecond: 7, now: clock.now });
    const starts: number[] = [];
    // callers arrive irregularly, several at a time
    for (let i = 0; i < 200; i++) {
      starts.push(clock.now() + limiter.reserve());
      clock.advance((i * 37) % 5 === 0 ? 0 : (i * 53) % 300);
    }
    starts.sort((a, b) => a - b);
    for (let i = 0; i + 7 < starts.length; i++)
      assert.ok(starts[i + 7] - starts[i] >= 1000 - 1e-6, `8 requests within 1 s at ${i}`);
  });

  it('without a rate, only announced pauses delay requests', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ now: clock.now });
    assert.deepEqual(reserveAll(limiter, 3), [0, 0, 0]);
    limiter.pauseFor(3000);
    assert.equal(limiter.pauseLeft(), 3000);
    clock.advance(1000);
    assert.deepEqual(reserveAll(limiter, 2), [2000, 2000]);
    limiter.pauseFor(500);
    assert.equal(limiter.pauseLeft(), 2000, 'a shorter pause never cuts an earlier one');
    for (const bad of [NaN, -5, Infinity, 0]) limiter.pauseFor(bad);
    assert.equal(limiter.pauseLeft(), 2000, 'NaN, negative, infinite and zero pauses are ignored');
  });

  it('after a pause, a configured rate still spaces the requests', () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ ratePerSecond: 2, now: clock.now });
    limiter.pauseFor(5000);
    assert.deepEqual(reserveAll(limiter, 3), [5000, 5500, 6000]);
  });
});

describe('rateLimitPauseMs (RateLimit headers)', () => {
  it('RateLimit-Remaining 0 pauses until RateLimit-Reset seconds from now', () => {
    assert.equal(rateLimitPauseMs({ 'ratelimit-remaining': '0', 'ratelimit-reset': '12' }, NOW), 12_000);
    assert.equal(rateLimitPauseMs({ 'ratelimit-remaining': '0', 'ratelimit-reset': '1.5' }, NOW), 1500);
  });

  it('remaining above 0, or no reset, is no pause', () => {
    assert.equal(rateLimitPauseMs({ 'ratelimit-remaining': '1', 'ratelimit-reset': '12' }, NOW), null);
    assert.equal(rateLimitPauseMs({ 'ratelimit-remaining': '0' }, NOW), null);
    assert.equal(rateLimitPauseMs({}, NOW), null);
  });

  it('reads the combined RateLimit header, old and new syntax', () => {
    assert.equal(rateLimitPauseMs({ ratelimit: 'limit=100, remaining=0, reset=30' }, NOW), 30_000);
    assert.equal(rateLimitPauseMs({ ratelimit: '"default";r=0;t=7' }, NOW), 7000);
    assert.equal(rateLimitPauseMs({ ratelimit: 'limit=100, remaining=5, reset=30' }, NOW), null);
  });

  it('X-RateLimit-Reset: seconds, a Unix time in seconds, or in milliseconds', () => {
    assert.equal(rateLimitPauseMs({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '20' }, NOW), 20_000);
    assert.equal(
      rateLimitPauseMs({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1000 + 45) }, NOW),
      45_000,
    );
    assert.equal(
      rateLimitPauseMs({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW + 3000) }, NOW),
      3000,
    );
    assert.equal(
      rateLimitPauseMs({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1000 - 60) }, NOW),
      null,
      'a reset in the past',
    );
  });

  it('the longest pause among the header families wins; the first of several policies applies', () => {
    assert.equal(
      rateLimitPauseMs(
        { 'ratelimit-remaining': '0', 'ratelimit-reset': '5', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '9' },
        NOW,
      ),
      9000,
    );
    assert.equal(rateLimitPauseMs({ 'x-ratelimit-remaining': '0, 50', 'x-ratelimit-reset': '4, 60' }, NOW), 4000);
    assert.equal(
      rateLimitPauseMs({ 'x-ratelimit-remaining': ['0', '50'], 'x-ratelimit-reset': ['4', '60'] }, NOW),
      4000,
    );
  });

  it('ignores hostile values: negative, NaN, non-numeric, exponents, absurdly long', () => {
    const hostile = ['-1', 'NaN', 'Infinity', 'soon', '1e9', '0x10', '', ' ', '9'.repeat(400), '1'.repeat(20)];
    for (const value of hostile) {
      assert.equal(
        rateLimitPauseMs({ 'ratelimit-remaining': '0', 'ratelimit-reset': value }, NOW),
        null,
        `reset ${JSON.stringify(value.slice(0, 20))}`,
      );
      assert.equal(
        rateLimitPauseMs({ 'ratelimit-remaining': value, 'ratelimit-reset': '10' }, NOW),
        null,
        `remaining ${JSON.stringify(value.slice(0, 20))}`,
      );
      assert.equal(rateLimitPauseMs({ ratelimit: `remaining=0, reset=${value}` }, NOW), null);
    }
    assert.equal(
      rateLimitPauseMs({ ratelimit: `remaining=0, reset=5${',x'.repeat(1000)}` }, NOW),
      null,
      'an overlong combined header is not parsed',
    );
  });
});

describe('HttpClient: rate limits before a 429 happens', () => {
  afterEach(() => nock.cleanAll());

  function client(options: { maxRequestsPerSecond?: number; maxRetryWaitMs?: number } = {}) {
    const clock = fakeClock();
    const waits: number[] = [];
    const http = new HttpClient({
      retry: new RetryPolicy(
        { ...DEFAULT_RETRY, maxRetryWaitMs: options.maxRetryWaitMs ?? DEFAULT_RETRY.maxRetryWaitMs },
        clock.now,
      ),
      connectTimeoutMs: 1000,
      requestTimeoutMs: 1000,
      logger: silentLogger(),
      maxRequestsPerSecond: options.maxRequestsPerSecond,
      now: clock.now,
      // waiting moves the fake clock, as a real wait would
      sleep: async (ms) => {
        waits.push(ms);
        clock.advance(ms);
      },
    });
    return { http, waits };
  }
  const get = (path: string) => ({
    method: 'GET' as const,
    url: `http://api.test${path}`,
    headers: [] as Array<[string, string]>,
  });

  it('waits until the announced reset before the next request, and only then', async () => {
    nock('http://api.test')
      .get('/a')
      .reply(200, '[]', { 'RateLimit-Remaining': '0', 'RateLimit-Reset': '3' })
      .get('/b')
      .reply(200, '[]', { 'RateLimit-Remaining': '9', 'RateLimit-Reset': '60' })
      .get('/c')
      .reply(200, '[]');
    const { http, waits } = client();
    await http.send(get('/a'));
    assert.deepEqual(waits, []);
    await http.send(get('/b'));
    assert.deepEqual(waits, [3000]);
    await http.send(get('/c'));
    assert.deepEqual(waits, [3000], 'remaining above 0: no wait');
    http.close();
  });

  it('does not take an announced pause longer than the retry ceiling on trust', async () => {
    nock('http://api.test')
      .get('/a')
      .reply(200, '[]', { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(NOW / 1000 + 86_400) })
      .get('/b')
      .reply(200, '[]');
    const { http, waits } = client({ maxRetryWaitMs: 60_000 });
    await http.send(get('/a'));
    await http.send(get('/b'));
    assert.deepEqual(waits, []);
    http.close();
  });

  it('spaces requests at the configured rate, 0.5 per second = 2 s apart', async () => {
    nock('http://api.test').get('/x').times(3).reply(200, '[]');
    const { http, waits } = client({ maxRequestsPerSecond: 0.5 });
    for (let i = 0; i < 3; i++) await http.send(get('/x'));
    assert.deepEqual(waits, [2000, 2000]);
    http.close();
  });

  it('sends the same requests with or without the headers: they only delay', async () => {
    const scope = nock('http://api.test')
      .get('/x?page=1')
      .reply(200, '[1]', { 'RateLimit-Remaining': '0', 'RateLimit-Reset': '1' })
      .get('/x?page=2')
      .reply(200, '[2]');
    const { http } = client();
    const bodies = [
      (await http.send(get('/x?page=1'))).body.toString(),
      (await http.send(get('/x?page=2'))).body.toString(),
    ];
    assert.deepEqual(bodies, ['[1]', '[2]']);
    assert.ok(scope.isDone());
    http.close();
  });
});
