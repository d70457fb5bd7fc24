import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../../../src/common/logger.js';
import { HttpClient, RequestCancelled } from '../../../src/extractor/http/http-client.js';
import { RetryPolicy } from '../../../src/extractor/http/retry-policy.js';

describe('HttpClient and the run stop signal', () => {
  let server: http.Server;
  let base: string;
  let hold = false;
  before(async () => {
    server = http.createServer((_req, res) => {
      if (hold) return; // never answers: only the stop signal ends the request
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":1}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  function client(signal: AbortSignal): HttpClient {
    const retry = new RetryPolicy({
      maxRetries: 0,
      httpCodes: [],
      curlCodes: [],
      retryHeader: 'Retry-After',
      maxRetryWaitMs: 0,
      backoffBaseMs: 0,
    });
    return new HttpClient({
      retry,
      connectTimeoutMs: 5000,
      requestTimeoutMs: 5000,
      logger: createLogger({ level: 'silent' }),
      signal,
    });
  }

  it('leaves no listener on the run signal per request (a long run would keep every request alive)', async () => {
    const stop = new AbortController();
    const http = client(stop.signal);
    try {
      hold = false;
      for (let i = 0; i < 30; i++)
        assert.equal((await http.send({ method: 'GET', url: `${base}/page/${i}`, headers: [] })).status, 200);
      assert.equal(getEventListeners(stop.signal, 'abort').length, 0);
    } finally {
      http.close();
    }
  });

  it('a per-request signal beside the run signal: nothing stays attached to either long-lived signal', async () => {
    const stop = new AbortController();
    const tree = new AbortController();
    const http = client(stop.signal);
    try {
      hold = false;
      for (let i = 0; i < 30; i++)
        assert.equal(
          (await http.send({ method: 'GET', url: `${base}/page/${i}`, headers: [] }, { signal: tree.signal })).status,
          200,
        );
      for (const signal of [stop.signal, tree.signal]) {
        assert.equal(getEventListeners(signal, 'abort').length, 0);
        // AbortSignal.any would leave a composite per request in Node's dependant set (kept until the source is collected)
        const dependants = Object.getOwnPropertySymbols(signal).find((s) => s.description === 'kDependantSignals');
        assert.equal(dependants ? (signal as unknown as Record<symbol, Set<unknown>>)[dependants].size : 0, 0);
      }
    } finally {
      http.close();
    }
  });

  it('either signal aborts a request in flight', async () => {
    for (const which of ['run', 'request'] as const) {
      const stop = new AbortController();
      const mine = new AbortController();
      const http = client(stop.signal);
      try {
        hold = true;
        const pending = http.send({ method: 'GET', url: `${base}/held`, headers: [] }, { signal: mine.signal });
        setImmediate(() => (which === 'run' ? stop : mine).abort());
        await assert.rejects(pending, (e) => e instanceof RequestCancelled, which);
        assert.equal(
          getEventListeners(stop.signal, 'abort').length + getEventListeners(mine.signal, 'abort').length,
          0,
        );
      } finally {
        hold = false;
        http.close();
      }
    }
  });

  it('still aborts a request in flight when the run is stopped', async () => {
    const stop = new AbortController();
    const http = client(stop.signal);
    try {
      hold = true;
      const pending = http.send({ method: 'GET', url: `${base}/held`, headers: [] });
      setImmediate(() => stop.abort());
      await assert.rejects(pending, (e) => e instanceof RequestCancelled);
      assert.equal(getEventListeners(stop.signal, 'abort').length, 0);
    } finally {
      hold = false;
      http.close();
    }
  });
});
