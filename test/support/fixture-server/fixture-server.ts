import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A request as it arrived: the raw request line target (path + query, byte for byte) and body. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface FixtureResponse {
  status?: number;
  headers?: Record<string, string>;
  /** a string is sent as is; anything else as JSON */
  body?: unknown;
}

export type FixtureHandler = (
  request: RecordedRequest,
) => FixtureResponse | undefined | Promise<FixtureResponse | undefined>;

export interface FixtureServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export interface FixtureServerOptions {
  handler: FixtureHandler;
  /** added before every response (simulates a remote API) */
  latencyMs?: number;
  port?: number;
  host?: string;
  /** keep every request in `requests` (off for long benchmarks) */
  record?: boolean;
}

/**
 * A small real HTTP server for fixtures, tests and benchmarks. It records the raw request target
 * so tests can assert exact URL sequences; unmatched requests get 404 with a JSON message.
 */
export async function startFixtureServer(options: FixtureServerOptions): Promise<FixtureServer> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: RecordedRequest = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      if (options.record !== false) requests.push(request);
      void respond(request, res);
    });
  });
  async function respond(request: RecordedRequest, res: http.ServerResponse): Promise<void> {
    try {
      if (options.latencyMs) await sleep(options.latencyMs);
      const response = await options.handler(request);
      if (!response) {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ message: `Unknown request ${request.method} ${request.url}` }));
        return;
      }
      const body =
        typeof response.body === 'string'
          ? response.body
          : response.body === undefined
            ? ''
            : JSON.stringify(response.body);
      res.writeHead(response.status ?? 200, { 'Content-Type': 'application/json', ...response.headers });
      res.end(body);
    } catch (error) {
      res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ message: String(error) }));
    }
  }
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
