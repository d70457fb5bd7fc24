import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** A listener that serves only `GET /metrics` (a worker's metrics: it serves no API). */
export interface MetricsListener {
  /** `http://host:port` it listens on */
  url: string;
  close(): Promise<void>;
}

/** how long a connection may take to send its request (a scraper's is a few bytes) */
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * Serves `registry` at `GET /metrics` on `host:port` (0: any free port), without a token like a
 * server's `/metrics`; anything else gets 404 (405 for another method on /metrics). Rejects with
 * the listen error (EADDRINUSE, …) when it cannot listen.
 */
export async function startMetricsListener(registry: Registry, host: string, port: number): Promise<MetricsListener> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: GET /metrics\n');
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end();
      return;
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        response
          .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
          .end(`Metrics could not be collected: ${(error as Error).message}\n`);
      },
    );
  });
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.headersTimeout = REQUEST_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
