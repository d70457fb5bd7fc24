import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger } from '../../../src/common/logger.js';
import { DEFAULT_RETRY } from '../../../src/extractor/config/api-settings.js';
import { HttpClient } from '../../../src/extractor/http/http-client.js';
import { RetryPolicy } from '../../../src/extractor/http/retry-policy.js';

/** Network failures from a real socket: the server drops the first connections. */
describe('retries of network errors against a real server', () => {
  let server: http.Server;
  let url: string;
  let drops = 0;
  let seen = 0;

  before(async () => {
    server = http.createServer((req, res) => {
      seen++;
      if (drops > 0) {
        drops--;
        req.socket.destroy();
        return;
      }
      res.end('[1]');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen = 0;
  });

  function client(maxRetries: number) {
    const waits: number[] = [];
    const c = new HttpClient({
      retry: new RetryPolicy({ ...DEFAULT_RETRY, maxRetries }),
      connectTimeoutMs: 2000,
      requestTimeoutMs: 2000,
      logger: silentLogger(),
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    return { c, waits };
  }

  it('retries a reset connection and then succeeds', async () => {
    drops = 2;
    const { c, waits } = client(5);
    const response = await c.send({ method: 'GET', url, headers: [] });
    assert.equal(response.body.toString(), '[1]');
    assert.equal(seen, 3);
    assert.deepEqual(waits, [1000, 2000]);
    c.close();
  });

  it('fails naming the URL and the curl code when the error persists', async () => {
    drops = 3;
    const { c } = client(2);
    await assert.rejects(c.send({ method: 'GET', url, headers: [] }), (e: Error) => {
      assert.match(
        e.message,
        new RegExp(`GET ${url.replace(/[.]/g, '\\.')} failed: .*\\(curl error (52|56)\\) after 3 attempts`),
      );
      return true;
    });
    c.close();
  });

  it('fails at once on a refused connection when curl code 7 is not retried', async () => {
    const c = new HttpClient({
      retry: new RetryPolicy({ ...DEFAULT_RETRY, curlCodes: [] }),
      connectTimeoutMs: 2000,
      requestTimeoutMs: 2000,
      logger: silentLogger(),
    });
    await assert.rejects(
      c.send({ method: 'GET', url: 'http://127.0.0.1:1/x', headers: [] }),
      /failed: .*ECONNREFUSED.*\(curl error 7\)$/,
    );
    c.close();
  });
});

describe('Storage API client: network errors against a real socket', () => {
  it('retries a dropped connection, then reads the answer', async () => {
    const { HttpConfigStore } = await import('../../../src/store/remote/http-config-store.js');
    let calls = 0;
    const server = http.createServer((req, res) => {
      calls++;
      if (calls === 1) {
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"id":"7","description":"t","owner":{"id":"3","name":"p"}}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const client = new HttpConfigStore({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        token: 't',
        retryBaseMs: 1,
      });
      const info = await client.verifyToken();
      assert.equal(info.projectId, 3);
      assert.equal(calls, 2);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
