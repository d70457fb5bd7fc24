import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { rm } from 'node:fs/promises';
import { UserError } from '../../../src/common/errors.js';
import { silentLogger } from '../../../src/common/logger.js';
import { DEFAULT_RETRY } from '../../../src/extractor/config/api-settings.js';
import { HttpClient } from '../../../src/extractor/http/http-client.js';
import { ResponseTooLarge } from '../../../src/extractor/http/response-size.js';
import { RetryPolicy } from '../../../src/extractor/http/retry-policy.js';
import { makeDataDir } from '../../support/extraction.js';
import { startGzipBombServer, type HostileServer } from '../../support/hostile-server.js';
import { gexRunPeakRss as gexRun, oneJob as job } from '../../support/peak-rss-run.js';

describe('a hostile API: a gzip bomb (10 MB of gzip → 10 GiB of JSON)', function () {
  this.timeout(60_000);
  let bomb: HostileServer;
  let plain: http.Server;
  let plainUrl: string;
  let baselineMiB: number;

  before(async () => {
    bomb = await startGzipBombServer(10 * 1024);
    plain = http.createServer((_req, res) => res.end('[{"id":1}]'));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
    // the peak RSS of the same command on a harmless API: what the bomb may add to is measured from here
    const dir = await makeDataDir(job(plainUrl, 'items'));
    try {
      const run = await gexRun(dir);
      assert.equal(run.code, 0, run.output);
      baselineMiB = run.peakRssMiB;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  after(async () => {
    await bomb.close();
    plain.closeAllConnections();
    await new Promise<void>((resolve) => plain.close(() => resolve()));
  });

  it('with GEX_MAX_RESPONSE_SIZE=8M: exit 1 naming the URL and the limit; memory grows by about the limit, not the bomb', async () => {
    const dir = await makeDataDir(job(bomb.url, 'bomb'));
    try {
      const run = await gexRun(dir, { GEX_MAX_RESPONSE_SIZE: '8M' });
      assert.equal(run.code, 1, run.output);
      assert.match(
        run.output,
        new RegExp(`The response to GET ${bomb.url}/bomb is too large: over 8 MiB once decompressed`),
      );
      assert.doesNotMatch(run.output, /\n\s+at /, 'no stack trace');
      const growth = run.peakRssMiB - baselineMiB;
      assert.ok(
        growth < 40,
        `peak RSS grew by ${growth.toFixed(0)} MiB over the ${baselineMiB.toFixed(0)} MiB baseline`,
      );
      console.log(
        `      gzip bomb, limit 8 MiB: peak RSS ${run.peakRssMiB.toFixed(0)} MiB (harmless API: ${baselineMiB.toFixed(0)} MiB)`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  // the default limit (256 MiB decompressed) is in hostile-api.stress.test.ts (npm run test:stress)
});

describe('a hostile API: body size, slow bodies and oversized headers (HttpClient on a real socket)', () => {
  let server: http.Server;
  let url: string;
  const sockets = new Set<import('node:net').Socket>();

  before(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/exactly-1000') return res.end(Buffer.alloc(1000, 0x20));
      if (req.url === '/1001') return res.end(Buffer.alloc(1001, 0x20));
      if (req.url === '/trickle') {
        // a byte every 50 ms, forever
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write('[');
        const timer = setInterval(() => res.write(' '), 50);
        res.on('close', () => clearInterval(timer));
        return;
      }
      if (req.url === '/huge-header') {
        res.writeHead(200, { 'X-Padding': 'x'.repeat(64 * 1024) });
        return res.end('[]');
      }
      res.end('[]');
    });
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const client = (options: { maxResponseBytes?: number; requestTimeoutMs?: number } = {}) =>
    new HttpClient({
      retry: new RetryPolicy({ ...DEFAULT_RETRY, maxRetries: 0 }),
      connectTimeoutMs: 2000,
      requestTimeoutMs: options.requestTimeoutMs ?? 5000,
      maxResponseBytes: options.maxResponseBytes,
      logger: silentLogger(),
    });

  it('reads a body of exactly the limit and refuses one byte more, naming the URL and the limit', async () => {
    const c = client({ maxResponseBytes: 1000 });
    try {
      assert.equal((await c.send({ method: 'GET', url: `${url}/exactly-1000`, headers: [] })).body.length, 1000);
      await assert.rejects(c.send({ method: 'GET', url: `${url}/1001`, headers: [] }), (e: Error) => {
        assert.ok(e instanceof ResponseTooLarge);
        assert.match(
          e.message,
          new RegExp(`^The response to GET ${url}/1001 is too large: over 1,000 bytes once decompressed`),
        );
        return true;
      });
    } finally {
      c.close();
    }
  });

  it('a body that never ends fails at the request timeout (GE: requestTimeout, 300 s by default)', async () => {
    const c = client({ requestTimeoutMs: 400 });
    const started = Date.now();
    try {
      await assert.rejects(c.send({ method: 'GET', url: `${url}/trickle`, headers: [] }), (e: Error) => {
        assert.ok(e instanceof UserError);
        assert.match(e.message, /trickle failed: Timeout awaiting 'request' for 400ms \(curl error 28\)/);
        return true;
      });
      assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
    } finally {
      c.close();
    }
  });

  it('a header larger than 16 KiB fails with one clear user error', async () => {
    const c = client();
    try {
      await assert.rejects(c.send({ method: 'GET', url: `${url}/huge-header`, headers: [] }), (e: Error) => {
        assert.ok(e instanceof UserError);
        assert.match(e.message, /huge-header failed: .*Header overflow/);
        return true;
      });
    } finally {
      c.close();
    }
  });
});
