import type { FastifyInstance } from 'fastify';
import { DatabaseUnavailable } from '../../store/sql/database.js';
import type { ServerBackend } from '../backend.js';

/** Longest a health check waits for the database: a probe needs an answer, not a hung request. */
export const HEALTH_TIMEOUT_MS = 3000;

class HealthTimeout extends Error {}

function withTimeout(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HealthTimeout(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The reason a failed check gives. Anyone may call /health, so it names the kind of failure only;
 * the error itself (database host, file paths) goes to the server log.
 */
function reasonOf(error: unknown, timeoutMs: number): string {
  if (error instanceof HealthTimeout) return `the store's database did not answer within ${timeoutMs / 1000} s`;
  if (error instanceof DatabaseUnavailable) return "the store's database cannot be reached";
  return "the store's database failed a health query";
}

export interface HealthOptions {
  timeoutMs?: number;
  /** told of every failed check (metrics) */
  onFailure?: (error: unknown) => void;
}

/**
 * `GET /health`, no token: 200 `{"status":"ok"}` when the store answers a cheap query, else 503
 * `{"status":"unavailable","reason":…}` — for container health checks and load balancers.
 */
export function healthRoute(app: FastifyInstance, backend: ServerBackend, options: HealthOptions = {}): void {
  const timeoutMs = options.timeoutMs ?? HEALTH_TIMEOUT_MS;
  app.get('/health', async (request, reply) => {
    try {
      await withTimeout(backend.ping(), timeoutMs);
      return await reply.code(200).header('cache-control', 'no-store').send({ status: 'ok' });
    } catch (error) {
      options.onFailure?.(error);
      request.log.warn(`Health check failed: ${(error as Error).message}`);
      return reply
        .code(503)
        .header('cache-control', 'no-store')
        .send({ status: 'unavailable', reason: reasonOf(error, timeoutMs) });
    }
  });
}
