/**
 * Rate-limit aware concurrency: an API that admits K requests per second (429 + Retry-After
 * beyond that) and gex asking for more parallelism than that allows. gex must finish without
 * failing, and its rate of served pages should settle near K.
 */
import path from 'node:path';
import { measureProcess, pagedDataDir, removeDir, repoRoot } from './measure.js';
import { startPagedServer } from './paged-server-process.js';

export interface RateLimitResult {
  allowedPerSecond: number;
  concurrency: number;
  latencyMs: number;
  pages: number;
  wallMs: number;
  throttledResponses: number;
  /** served pages per second after the first second (the burst allowance) until the end */
  settledPerSecond: number;
  /** settledPerSecond / allowedPerSecond */
  ratio: number;
}

const GEX = path.join(repoRoot, 'bin', 'gex.js');

/**
 * Served requests per second once the server's bucket, which starts full, has spent its burst:
 * the first second is skipped. `servedAt`: ms since the server started, in order.
 */
export function settledRate(servedAt: number[]): number {
  const start = servedAt[0] + 1000;
  const settled = servedAt.filter((t) => t >= start);
  const span = (settled[settled.length - 1] - start) / 1000;
  return span > 0 ? Math.round((settled.length / span) * 10) / 10 : 0;
}

export async function rateLimitedRun(
  allowedPerSecond = 20,
  concurrency = 8,
  pages = 200,
  latencyMs = 50,
): Promise<RateLimitResult> {
  const server = await startPagedServer({
    pages,
    recordsPerPage: 10,
    shape: 'flat',
    latencyMs,
    ratePerSecond: allowedPerSecond,
  });
  const dir = await pagedDataDir(server.url, 10, { concurrency });
  try {
    const m = await measureProcess([process.execPath, GEX, 'run', '--data-dir', dir, '--log-level', 'error']);
    const stats = await server.stats();
    const settledPerSecond = settledRate(stats.servedAt);
    return {
      allowedPerSecond,
      concurrency,
      latencyMs,
      pages,
      wallMs: Math.round(m.wallMs),
      throttledResponses: stats.throttled,
      settledPerSecond,
      ratio: Math.round((settledPerSecond / allowedPerSecond) * 100) / 100,
    };
  } finally {
    server.stop();
    await removeDir(dir);
  }
}
