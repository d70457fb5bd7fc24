import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import nock from 'nock';
import { isConnectFailure } from '../../../src/common/network-errors.js';
import { formatClockTime } from '../../../src/common/text.js';
import { DEFAULT_RETRY, type RetrySettings } from '../../../src/extractor/config/api-settings.js';
import { HttpClient } from '../../../src/extractor/http/http-client.js';
import { FIRST_CONTACT_MS, ReachedHosts } from '../../../src/extractor/http/reached-hosts.js';
import { RetryPolicy } from '../../../src/extractor/http/retry-policy.js';
import { captureLogger } from '../../support/extraction.js';

const START = new Date(2026, 10, 21, 12, 0, 0).getTime();

/**
 * A client on a clock of its own that moves only when the client waits: every wait is recorded,
 * none is slept (the 30 s and the 17 minutes pass in no time).
 */
function client(options: { reachedHosts?: ReachedHosts; retry?: Partial<RetrySettings> } = {}) {
  const waits: number[] = [];
  const clock = { now: START };
  const capture = captureLogger('debug');
  const c = new HttpClient({
    retry: new RetryPolicy({ ...DEFAULT_RETRY, ...options.retry }, () => clock.now),
    connectTimeoutMs: 2000,
    requestTimeoutMs: 2000,
    logger: capture.logger,
    now: () => clock.now,
    sleep: async (ms) => {
      waits.push(ms);
      clock.now += ms;
    },
    reachedHosts: options.reachedHosts,
  });
  const lines = () =>
    capture
      .text()
      .split('\n')
      .filter(Boolean)
      .map((line) => line.replace(/^\S+ +[A-Z]+ +/, ''));
  return { c, waits, clock, lines };
}

const get = (url: string) => ({ method: 'GET' as const, url, headers: [] as Array<[string, string]> });

/** A port on this host that nothing listens on (bound, then closed): connections to it are refused. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('HTTP client: a host that has not answered once in the run gets 30 s of retries, not 17 minutes', () => {
  afterEach(() => nock.cleanAll());

  it('fails within 30 s on a refused connection (a real closed port), naming host and port', async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/users`;
    const { c, waits, clock, lines } = client();
    try {
      await assert.rejects(c.send(get(url)), (e: Error & { gexCode?: string }) => {
        assert.equal(
          e.message,
          `Cannot connect to 127.0.0.1:${port} (GET ${url}): ECONNREFUSED (connection refused), curl error 7, on 5 attempts in 15 s. ` +
            'The host has not answered once in this run: gex retries such a host for at most 30 s (Generic Extractor up to 10 times, over 17 min 3 s). ' +
            'Check the host and port of parameters.api.baseUrl, and that the API is running.',
        );
        return true;
      });
    } finally {
      c.close();
    }
    // GE's backoff until the next wait would pass 30 s from the first attempt
    assert.deepEqual(waits, [1000, 2000, 4000, 8000]);
    assert.ok(clock.now - START <= FIRST_CONTACT_MS);
    const retryLines = lines();
    assert.equal(retryLines.length, 4);
    assert.match(
      retryLines[0],
      /retry 1 of 10 in 1\.0 s\. The host has not answered in this run: if it does not within 30 s of the first attempt, the run fails$/,
    );
    assert.ok(!retryLines.some((l) => /keeps failing|17 min/.test(l)), 'no worst case of GE’s schedule');
  });

  it('keeps GE’s whole schedule once the host has answered in the run: a server that went away mid-run', async () => {
    const server = http.createServer((_req, res) => res.end('[1]'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/users`;
    const { c, waits, lines } = client();
    try {
      assert.equal((await c.send(get(url))).status, 200);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await assert.rejects(c.send(get(url)), /failed: .*ECONNREFUSED.* \(curl error 7\) after 11 attempts$/);
    } finally {
      c.close();
    }
    assert.deepEqual(waits, [1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000, 512000]);
    // the worst case is said once, when the waits pile up (retry 5: 15 s waited, 16 s more)
    const outlook = lines().filter((l) => l.includes('If it keeps failing'));
    assert.equal(outlook.length, 1);
    assert.match(outlook[0], /retry 5 of 10 in 16\.0 s\. If it keeps failing, the last retry \(10\) is at /);
  });

  it('shares what answered between the clients of a run (its rows and iterations)', async () => {
    const reachedHosts = new ReachedHosts();
    const server = http.createServer((_req, res) => res.end('[1]'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/users`;
    const first = client({ reachedHosts });
    assert.equal((await first.c.send(get(url))).status, 200);
    first.c.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const second = client({ reachedHosts, retry: { maxRetries: 7 } });
    try {
      await assert.rejects(second.c.send(get(url)), /after 8 attempts$/);
    } finally {
      second.c.close();
    }
    assert.equal(second.waits.length, 7, 'all of GE’s retries: 64 s, past the first-contact limit');
    // another host of the same run has not answered: its own 30 s
    const third = client({ reachedHosts });
    try {
      await assert.rejects(third.c.send(get(`http://127.0.0.1:${await closedPort()}/x`)), /: Cannot connect to /);
    } finally {
      third.c.close();
    }
  });

  it('counts every connection that cannot be made, and nothing else, as the host not answering', () => {
    for (const code of ['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'EAI_AGAIN'])
      assert.ok(isConnectFailure({ code }), code);
    assert.ok(isConnectFailure({ code: 'ETIMEDOUT', name: 'TimeoutError', event: 'connect' }));
    assert.ok(isConnectFailure({ code: 'ETIMEDOUT', name: 'TimeoutError', event: 'lookup' }));
    // something answered: a reset, a timeout while the response comes, a TLS failure
    for (const error of [
      { code: 'ECONNRESET' },
      { code: 'EPIPE' },
      { code: 'ETIMEDOUT', name: 'TimeoutError', event: 'request' },
      { code: 'EPROTO' },
    ])
      assert.ok(!isConnectFailure(error), JSON.stringify(error));
  });

  it('names a host with its port, the scheme’s when the URL names none', () => {
    assert.equal(ReachedHosts.hostOf('https://api.test/x'), 'api.test:443');
    assert.equal(ReachedHosts.hostOf('http://api.test/x?page=2'), 'api.test:80');
    assert.equal(ReachedHosts.hostOf('http://[::1]:8080/x'), '[::1]:8080');
    const hosts = new ReachedHosts();
    hosts.answered('https://api.test/users');
    assert.ok(hosts.hasAnswered('https://api.test:443/orders?page=2'));
    assert.ok(!hosts.hasAnswered('http://api.test/orders'), 'another port is another host');
  });

  it('a connection not retried by curl.codes fails at once, as in GE', async () => {
    const port = await closedPort();
    const { c, waits } = client({ retry: { curlCodes: [] } });
    try {
      await assert.rejects(c.send(get(`http://127.0.0.1:${port}/x`)), /failed: .*ECONNREFUSED.*\(curl error 7\)$/);
    } finally {
      c.close();
    }
    assert.deepEqual(waits, []);
  });
});

describe('HTTP client: the worst case of the retry schedule is said when retries pile up, not at every retry', () => {
  afterEach(() => nock.cleanAll());

  it('one 429 with Retry-After: 1, then an answer: a plain retry line', async () => {
    nock('http://api.test').get('/x').reply(429, '', { 'Retry-After': '1' }).get('/x').reply(200, '[]');
    const { c, lines } = client();
    assert.equal((await c.send(get('http://api.test/x'))).status, 200);
    c.close();
    assert.deepEqual(lines(), [
      'GET http://api.test/x: status 429 Too Many Requests; retry 1 of 10 in 1.0 s (Retry-After)',
    ]);
  });

  it('503 after 503 with backoff: once, at the retry whose wait passes 30 s in all, with lastRetryAt', async () => {
    nock('http://api.test').get('/x').times(6).reply(503, 'busy').get('/x').reply(200, '[]');
    const capture = captureLogger('debug');
    const clock = { now: START };
    const c = new HttpClient({
      retry: new RetryPolicy(DEFAULT_RETRY, () => clock.now),
      connectTimeoutMs: 1000,
      requestTimeoutMs: 1000,
      logger: capture.logger,
      now: () => clock.now,
      sleep: async (ms) => void (clock.now += ms),
    });
    assert.equal((await c.send(get('http://api.test/x'))).status, 200);
    c.close();
    const text = capture.text();
    assert.equal(text.match(/If it keeps failing/g)?.length, 1);
    // retry 5 waits 16 s after 15 s of waits: 16 + 32 + … + 512 s = 1,008 s from then
    const at = START + 15_000;
    assert.match(
      text,
      new RegExp(
        `retry 5 of 10 in 16\\.0 s\\. If it keeps failing, the last retry \\(10\\) is at ${formatClockTime(at + 1_008_000, at)} at the earliest \\(16 min 48 s of waiting from now\\)`,
      ),
    );
  });

  it('a server that asks for a long wait at once: said at the first retry', async () => {
    nock('http://api.test').get('/x').reply(429, '', { 'Retry-After': '45' }).get('/x').reply(200, '[]');
    const { c, lines } = client();
    await c.send(get('http://api.test/x'));
    c.close();
    assert.match(lines()[0], /retry 1 of 10 in 45\.0 s \(Retry-After\)\. If it keeps failing, the last retry \(10\)/);
  });
});
