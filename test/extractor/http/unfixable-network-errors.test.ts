import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import nock from 'nock';
import { describeNetworkError, unfixableNetworkError } from '../../../src/common/network-errors.js';
import { formatClockTime } from '../../../src/common/text.js';
import { DEFAULT_RETRY, type RetrySettings } from '../../../src/extractor/config/api-settings.js';
import { HttpClient } from '../../../src/extractor/http/http-client.js';
import { RetryPolicy } from '../../../src/extractor/http/retry-policy.js';
import { HttpConfigStore } from '../../../src/store/remote/http-config-store.js';
import type { Clock } from '../../../src/store/remote/retry-budget.js';
import { captureLogger } from '../../support/extraction.js';

const NOW = new Date(2026, 10, 21, 12, 0, 0).getTime();

/** A client whose waits are recorded, not slept, with a fixed clock and a log to read. */
function client(settings: Partial<RetrySettings> = {}, extra: { caCertificate?: string } = {}) {
  const waits: number[] = [];
  const capture = captureLogger('debug');
  const c = new HttpClient({
    retry: new RetryPolicy({ ...DEFAULT_RETRY, ...settings }, () => NOW),
    connectTimeoutMs: 2000,
    requestTimeoutMs: 2000,
    logger: capture.logger,
    now: () => NOW,
    sleep: async (ms) => void waits.push(ms),
    tls: extra.caCertificate ? { caCertificate: extra.caCertificate } : undefined,
  });
  return { c, waits, log: capture.text };
}

const get = (url: string) => ({ method: 'GET' as const, url, headers: [] as Array<[string, string]> });

type Lookup = typeof dns.lookup;
const realLookup: Lookup = dns.lookup;

/**
 * Name resolution as the test says: `answers` are given out in turn per lookup — an error code
 * (`ENOTFOUND`: the name has no address; `EAI_AGAIN`: the DNS server did not answer) or an address.
 * Node's sockets read dns.lookup when they connect, so got meets these as it would meet DNS.
 */
function fakeDns(answers: string[]): void {
  dns.lookup = ((hostname: string, options: unknown, callback?: (...args: unknown[]) => void) => {
    const done = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
    const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all;
    const answer = answers.shift() ?? 'ENOTFOUND';
    process.nextTick(() => {
      if (/^E/.test(answer))
        done(
          Object.assign(new Error(`getaddrinfo ${answer} ${hostname}`), {
            code: answer,
            syscall: 'getaddrinfo',
            hostname,
          }),
        );
      else if (all) done(null, [{ address: answer, family: 4 }]);
      else done(null, answer, 4);
    });
  }) as unknown as Lookup;
}

/** A log line without its time and level. */
const sentences = (log: string) =>
  log
    .split('\n')
    .filter(Boolean)
    .map((line) => line.replace(/^\S+ +[A-Z]+ +/, ''));

describe("network errors a retry cannot fix fail at once; the rest keep GE's policy and say when it ends", () => {
  describe('classification', () => {
    it('names what cannot pass: a host name that does not exist, a certificate not trusted, a refused handshake', () => {
      assert.match(
        unfixableNetworkError({ code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND nosuch.example' })!,
        /the host name does not exist/,
      );
      for (const code of [
        'DEPTH_ZERO_SELF_SIGNED_CERT',
        'CERT_HAS_EXPIRED',
        'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
        'ERR_TLS_CERT_ALTNAME_INVALID',
        'SELF_SIGNED_CERT_IN_CHAIN',
      ]) {
        assert.match(
          unfixableNetworkError({ code })!,
          new RegExp(
            `TLS certificate is not accepted \\(${code}\\); trust its CA with parameters\\.api\\.caCertificate`,
          ),
        );
      }
      assert.match(
        unfixableNetworkError({
          code: 'EPROTO',
          message: 'write EPROTO …:SSL routines:ssl3_get_record:wrong version number:…',
        })!,
        /does not speak TLS on this port/,
      );
      assert.match(
        unfixableNetworkError({ code: 'EPROTO', message: '…:ssl3_read_bytes:tlsv1 alert protocol version:…' })!,
        /refused the TLS handshake/,
      );
      assert.match(
        unfixableNetworkError({
          code: 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE',
          message: 'sslv3 alert handshake failure',
        })!,
        /refused the TLS handshake/,
      );
    });

    it('keeps retrying what may pass: timeouts, resets, refused connections, a DNS server that does not answer, other TLS errors', () => {
      for (const code of [
        'ETIMEDOUT',
        'ECONNRESET',
        'ECONNREFUSED',
        'EAI_AGAIN',
        'EPIPE',
        'EHOSTUNREACH',
        'ENETUNREACH',
      ])
        assert.equal(unfixableNetworkError({ code, message: code }), undefined, code);
      assert.equal(
        unfixableNetworkError({ code: 'EPROTO', message: 'decryption failed or bad record mac' }),
        undefined,
      );
      assert.equal(describeNetworkError({ code: 'ECONNRESET' }), 'ECONNRESET (connection reset by the server)');
      assert.equal(describeNetworkError({ code: 'EAI_AGAIN' }), 'EAI_AGAIN (DNS did not answer (temporary))');
      assert.equal(describeNetworkError({ code: 'EWHATEVER' }), 'EWHATEVER');
    });
  });

  describe('HTTP client', () => {
    afterEach(() => nock.cleanAll());

    it('fails at once on a host name that does not exist, retries a DNS server that does not answer', async () => {
      const server = http.createServer((_req, res) => res.end('[]'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as AddressInfo).port;
      try {
        fakeDns(['ENOTFOUND']);
        const first = client();
        await assert.rejects(first.c.send(get(`http://nosuch.test:${port}/x`)), (e: Error) => {
          assert.match(
            e.message,
            /^GET http:\/\/nosuch\.test:\d+\/x failed: getaddrinfo ENOTFOUND nosuch\.test \(curl error 6\)\. Not retried: the host name does not exist/,
          );
          return true;
        });
        assert.deepEqual(first.waits, []);
        first.c.close();

        fakeDns(['EAI_AGAIN', '127.0.0.1']);
        const second = client();
        assert.equal((await second.c.send(get(`http://flaky-dns.test:${port}/x`))).status, 200);
        assert.deepEqual(second.waits, [1000]);
        assert.match(
          sentences(second.log())[0],
          /^GET http:\/\/flaky-dns\.test:\d+\/x: EAI_AGAIN \(DNS did not answer \(temporary\)\), curl error 6; retry 1 of 10 in 1\.0 s\. The host has not answered in this run: if it does not within 30 s of the first attempt, the run fails/,
        );
        second.c.close();
      } finally {
        dns.lookup = realLookup;
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });

    it('says why at every retry; a short wait is not an alarm (no worst case at the first retry)', async () => {
      let calls = 0;
      const server = http.createServer((req, res) => {
        calls++;
        if (calls === 1) res.writeHead(503).end('busy');
        else if (calls === 2) req.socket.destroy();
        else res.end('[]');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
      const { c, waits, log } = client();
      try {
        assert.equal((await c.send(get(url))).status, 200);
      } finally {
        c.close();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      assert.deepEqual(waits, [1000, 2000]);
      const lines = sentences(log());
      assert.equal(lines[0], `GET ${url}: status 503 Service Unavailable; retry 1 of 10 in 1.0 s`);
      assert.equal(
        lines[1],
        `GET ${url}: ECONNRESET (connection reset by the server), curl error 56; retry 2 of 10 in 2.0 s`,
      );
    });

    it('the outlook counts the wait the server asked for, then the backoff', async () => {
      nock('http://api.test').get('/x').reply(429, '', { 'Retry-After': '30' }).get('/x').reply(200, '[]');
      const capture = captureLogger('debug');
      const c = new HttpClient({
        retry: new RetryPolicy({ ...DEFAULT_RETRY, maxRetries: 3 }, () => NOW),
        connectTimeoutMs: 1000,
        requestTimeoutMs: 1000,
        logger: capture.logger,
        now: () => NOW,
        sleep: async () => undefined,
      });
      await c.send(get('http://api.test/x'));
      // 30 s asked for, then 2 s and 4 s
      assert.match(
        capture.text(),
        new RegExp(
          `retry 1 of 3 in 30\\.0 s \\(Retry-After\\)\\. If it keeps failing, the last retry \\(3\\) is at ${formatClockTime(NOW + 36_000, NOW)} at the earliest \\(36 s of waiting from now\\)`,
        ),
      );
      c.close();
    });
  });

  describe('HTTP client against real TLS servers', function () {
    this.timeout(30_000);
    let dir: string;
    let cert: string;
    let key: string;
    const servers: Array<http.Server | https.Server> = [];
    const listen = async (server: http.Server | https.Server) => {
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return (server.address() as AddressInfo).port;
    };

    before(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'gex-tls-unfixable-'));
      // a self-signed certificate for "localhost" only
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-keyout',
          'key.pem',
          '-out',
          'cert.pem',
          '-days',
          '2',
          '-subj',
          '/CN=localhost',
          '-addext',
          'subjectAltName=DNS:localhost',
        ],
        { cwd: dir, stdio: 'pipe' },
      );
      cert = await readFile(path.join(dir, 'cert.pem'), 'utf8');
      key = await readFile(path.join(dir, 'key.pem'), 'utf8');
    });
    after(async () => {
      for (const server of servers) await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    });

    it('fails at once, naming why: https to a plain HTTP port, a self-signed certificate, a certificate for another name', async () => {
      let requests = 0;
      const plain = await listen(http.createServer((_req, res) => void (requests++, res.end('[]'))));
      const tls = await listen(https.createServer({ key, cert }, (_req, res) => void (requests++, res.end('[]'))));
      const cases: Array<[string, ReturnType<typeof client>, RegExp]> = [
        [
          `https://127.0.0.1:${plain}/x`,
          client(),
          /\(curl error 35\)\. Not retried: the TLS handshake failed: the server does not speak TLS on this port/,
        ],
        [
          `https://127.0.0.1:${tls}/x`,
          client(),
          /\(curl error 60\)\. Not retried: the server's TLS certificate is not accepted \((DEPTH_ZERO_SELF_SIGNED_CERT|ERR_TLS_CERT_ALTNAME_INVALID)\)/,
        ],
        // trusted, but issued for localhost: GE's curl 51/60, never fixed by waiting (gex retried it 10 times before)
        [
          `https://127.0.0.1:${tls}/x`,
          client({}, { caCertificate: cert }),
          /\(curl error 60\)\. Not retried: the server's TLS certificate is not accepted \(ERR_TLS_CERT_ALTNAME_INVALID\)/,
        ],
      ];
      for (const [url, { c, waits }, pattern] of cases) {
        await assert.rejects(c.send(get(url)), (e: Error) => (assert.match(e.message, pattern), true));
        assert.deepEqual(waits, [], url);
        c.close();
      }
      assert.equal(requests, 0);
      // the same server with its CA and its own name works
      const ok = client({}, { caCertificate: cert });
      assert.equal((await ok.c.send(get(`https://localhost:${tls}/x`))).status, 200);
      ok.c.close();
    });

    it('keeps retrying a refused connection (a server restarting), as GE does', async () => {
      const { c, waits } = client({ maxRetries: 2 });
      await assert.rejects(c.send(get('http://127.0.0.1:1/x')), /ECONNREFUSED.*\(curl error 7\) after 3 attempts$/);
      assert.deepEqual(waits, [1000, 2000]);
      c.close();
    });
  });

  describe('Storage API client', () => {
    const clock = () => {
      let now = NOW;
      const slept: number[] = [];
      return {
        slept,
        now: () => now,
        sleep: async (ms: number) => void (slept.push(ms), (now += ms)),
      } satisfies Clock & { slept: number[] };
    };

    it('fails at once on a store host that does not exist; retries others, saying when it gives up', async () => {
      let calls = 0;
      const server = http.createServer((req, res) => {
        if (++calls === 1) return void req.socket.destroy();
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{"id":"1","description":"d","owner":{"id":"2","name":"p"}}');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as AddressInfo).port;
      try {
        fakeDns(['ENOTFOUND']);
        const gone = clock();
        await assert.rejects(
          new HttpConfigStore({ url: `http://gone.test:${port}`, token: 't', clock: gone }).verifyToken(),
          (e: Error) => {
            assert.equal(
              e.message,
              `The Storage API at http://gone.test:${port} cannot be reached: getaddrinfo ENOTFOUND gone.test. Not retried: the host name does not exist (DNS answered that it has no address); check the URL`,
            );
            return true;
          },
        );
        assert.deepEqual(gone.slept, []);
        assert.equal(calls, 0);
      } finally {
        dns.lookup = realLookup;
      }
      try {
        const busy = clock();
        const capture = captureLogger('info');
        await new HttpConfigStore({
          url: `http://127.0.0.1:${port}`,
          token: 't',
          clock: busy,
          logger: capture.logger,
        }).verifyToken();
        assert.deepEqual(busy.slept, [1000]);
        assert.match(
          sentences(capture.text())[0],
          new RegExp(
            `: ECONNRESET \\(connection reset by the server\\); retry 1 of 11 in 1\\.0 s; gives up at ${formatClockTime(NOW + 600_000, NOW)} at the latest \\(GEX_STORE_TIMEOUT: 600 s\\)$`,
          ),
        );
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  });
});
