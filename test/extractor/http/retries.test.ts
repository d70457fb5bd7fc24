import assert from 'node:assert/strict';
import nock from 'nock';
import { silentLogger } from '../../../src/common/logger.js';
import { DEFAULT_RETRY, parseRetrySettings, type RetrySettings } from '../../../src/extractor/config/api-settings.js';
import { HttpClient } from '../../../src/extractor/http/http-client.js';
import { RetryPolicy } from '../../../src/extractor/http/retry-policy.js';
import { fromPlain } from '../../../src/json/index.js';

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);

function client(settings: Partial<RetrySettings> = {}) {
  const waits: number[] = [];
  const http = new HttpClient({
    retry: new RetryPolicy({ ...DEFAULT_RETRY, ...settings }, () => NOW),
    connectTimeoutMs: 1000,
    requestTimeoutMs: 1000,
    logger: silentLogger(),
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  return { http, waits };
}

const get = (path: string) => ({
  method: 'GET' as const,
  url: `http://api.test${path}`,
  headers: [] as Array<[string, string]>,
});

describe('retries (GE policy)', () => {
  afterEach(() => nock.cleanAll());

  it('retries 5xx with exponential backoff 1 s, 2 s, 4 s', async () => {
    nock('http://api.test').get('/x').times(3).reply(503, 'busy').get('/x').reply(200, '[]');
    const { http, waits } = client();
    const response = await http.send(get('/x'));
    assert.equal(response.status, 200);
    assert.equal(response.attempts, 4);
    assert.deepEqual(waits, [1000, 2000, 4000]);
    http.close();
  });

  it('honours Retry-After in seconds and as an HTTP date', async () => {
    nock('http://api.test')
      .get('/x')
      .reply(429, '', { 'Retry-After': '7' })
      .get('/x')
      .reply(429, '', { 'Retry-After': new Date(NOW + 3000).toUTCString() })
      .get('/x')
      .reply(200, '[]');
    const { http, waits } = client();
    await http.send(get('/x'));
    assert.deepEqual(waits, [7000, 3000]);
    http.close();
  });

  it('reads a large numeric Retry-After as a unix timestamp and honours a custom retry header', async () => {
    const at = Math.floor(NOW / 1000) + 5;
    nock('http://api.test')
      .get('/x')
      .reply(503, '', { 'X-RetryAfter': String(at) })
      .get('/x')
      .reply(200, '[]');
    const { http, waits } = client({ retryHeader: 'X-RetryAfter' });
    await http.send(get('/x'));
    assert.deepEqual(waits, [5000]);
    http.close();
  });

  it('refuses to wait longer than maxRetryWait and says how to change it', async () => {
    nock('http://api.test').get('/x').reply(429, '', { 'Retry-After': '3600' });
    const { http, waits } = client({ maxRetryWaitMs: 60_000 });
    await assert.rejects(http.send(get('/x')), /asked to wait 3600 s .*ceiling of 60 s.*maxRetryWait/);
    assert.deepEqual(waits, []);
    http.close();
  });

  it('returns the last response once maxRetries is exhausted', async () => {
    nock('http://api.test').get('/x').times(3).reply(500, 'down');
    const { http, waits } = client({ maxRetries: 2 });
    const response = await http.send(get('/x'));
    assert.equal(response.status, 500);
    assert.equal(response.attempts, 3);
    assert.equal(waits.length, 2);
    http.close();
  });

  it('retries any listed status, even 2xx (GE retries a 202 when told to)', async () => {
    nock('http://api.test').get('/x').reply(202, '[]').get('/x').reply(200, '[1]');
    const { http } = client({ httpCodes: [202] });
    const response = await http.send(get('/x'));
    assert.equal(response.body.toString(), '[1]');
    http.close();
  });

  it('does not retry statuses that are not listed', async () => {
    nock('http://api.test').get('/x').reply(404, 'nope');
    const { http, waits } = client();
    assert.equal((await http.send(get('/x'))).status, 404);
    assert.deepEqual(waits, []);
    http.close();
  });

  it('reads retryConfig, including the legacy flat keys and string codes GE never matches', () => {
    const settings = parseRetrySettings(
      fromPlain({ maxRetries: '3', headerName: 'X-Wait', httpCodes: [500, '502'], backoffBase: 0.5 }),
      'r',
    );
    assert.equal(settings.maxRetries, 3);
    assert.equal(settings.retryHeader, 'X-Wait');
    assert.deepEqual(settings.httpCodes, [500]);
    assert.equal(settings.backoffBaseMs, 500);
  });
});
