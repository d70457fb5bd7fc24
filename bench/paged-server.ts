/**
 * A paged API in its own process for benchmarks: `node paged-server.js '<PagedServerOptions JSON>'`.
 * Reports its URL over IPC and answers a `stats` message with what it served.
 */
import { startFixtureServer, type FixtureHandler } from '../test/support/fixture-server/fixture-server.js';
import { flatRecord, pagedApi } from '../test/support/fixture-server/paged-api.js';

export interface PagedServerOptions {
  pages: number;
  recordsPerPage: number;
  shape: 'flat' | 'nested';
  /** added before every response */
  latencyMs?: number;
  /** a token bucket: at most this many requests per second (burst of one second), else 429 + Retry-After: 1 */
  ratePerSecond?: number;
}

export interface PagedServerStats {
  served: number;
  throttled: number;
  /** when each served (200) response was sent, ms since the server started */
  servedAt: number[];
}

function nestedRecord(i: number): unknown {
  return {
    ...flatRecord(i),
    owner: { id: i % 97, name: `owner ${i % 97}`, address: { city: 'Prague', zip: '11000' } },
    tags: ['a', `t${i % 7}`],
    lines: [
      { sku: `s${i}`, qty: i % 5 },
      { sku: `x${i}`, qty: 1 },
    ],
  };
}

/** `/items/{id}`: one record's detail, what a child job asks for per parent record. */
function detail(request: { url: string }): { body: unknown } | undefined {
  const match = /^\/items\/(\d+)(\?|$)/.exec(request.url);
  if (!match) return undefined;
  const id = Number(match[1]);
  return {
    body: { id, description: `detail of item ${id}`, stock: id % 17, warehouse: { code: `w${id % 5}`, city: 'Brno' } },
  };
}

/** Admits `rate` requests per second on average, with a burst of one second's worth. */
function tokenBucket(rate: number): () => boolean {
  let tokens = rate;
  let last = performance.now();
  return () => {
    const now = performance.now();
    tokens = Math.min(rate, tokens + ((now - last) / 1000) * rate);
    last = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}

const options = JSON.parse(process.argv[2]) as PagedServerOptions;
const pages = pagedApi({
  pages: options.pages,
  recordsPerPage: options.recordsPerPage,
  record: options.shape === 'nested' ? nestedRecord : flatRecord,
});
const admit = options.ratePerSecond ? tokenBucket(options.ratePerSecond) : () => true;
const started = performance.now();
const stats: PagedServerStats = { served: 0, throttled: 0, servedAt: [] };
const handler: FixtureHandler = (request) => {
  if (!admit()) {
    stats.throttled++;
    return { status: 429, headers: { 'Retry-After': '1' }, body: { message: 'rate limit exceeded' } };
  }
  stats.served++;
  stats.servedAt.push(Math.round(performance.now() - started));
  return detail(request) ?? pages(request);
};
const server = await startFixtureServer({ handler, latencyMs: options.latencyMs, record: false });
process.send?.({ url: server.url });
process.on('message', (m) => {
  if ((m as { type?: string }).type === 'stats') process.send?.({ stats });
});
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
