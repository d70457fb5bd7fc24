import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { StoreError } from '../../store/store-error.js';
import type { ByteBudget } from '../http/byte-budget.js';
import type { ResponseObserver } from './response-observers.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

const EVENT_LOOP_SAMPLE_MS = 100;
/** Latency buckets in seconds: cached reads take well under a millisecond, lock waits up to 10 s. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A new, empty registry (the job platform's and the server's metrics share one). */
export function newRegistry(): Registry {
  return new Registry();
}

/**
 * Node's default process metrics (CPU, memory, event-loop delay, …) in `registry`. The event-loop
 * delay is sampled every 100 ms, not every 10 ms (prom-client's default): the frequent timer cost
 * gex serve ~5% of its throughput under load (bench/serve-overhead.ts).
 */
export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
}

/**
 * Prometheus metrics of one server (prom-client): requests and their latency by method, route
 * pattern and status, store errors by Keboola error code, and Node's default process metrics.
 * Every label has a bounded set of values — route patterns (`unmatched` for anything no route
 * matched), HTTP methods, status codes, error codes — so no request can add a series of its own.
 * Each server has its own registry (tests build many servers in one process), or the one given
 * (the job platform's: its job metrics beside these).
 */
export class ServerMetrics {
  readonly registry: Registry;
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly duration: Histogram<'method' | 'route' | 'status'>;
  private readonly storeErrors: Counter<'code'>;

  /**
   * The counter and histogram children of each label combination, made once: prom-client hashes
   * the labels on every inc() or observe() otherwise. Bounded as the labels are.
   */
  private readonly series = new Map<string, { record(seconds: number): void }>();

  constructor(budgets: { uploads?: ByteBudget } = {}, registry = new Registry()) {
    this.registry = registry;
    this.requests = new Counter({
      name: 'gex_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'gex_http_request_duration_seconds',
      help: 'Time from receiving a request to its answer, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
    this.storeErrors = new Counter({
      name: 'gex_store_errors_total',
      help: 'Requests the store failed (5xx: database unavailable, internal errors) and failed health checks, by error code',
      labelNames: ['code'] as const,
      registers: [registry],
    });
    const { uploads } = budgets;
    if (uploads) {
      new Gauge({
        name: 'gex_upload_memory_bytes',
        help: 'Bytes of memory File Storage uploads hold now (taken at their start: the chunks they may fill)',
        registers: [this.registry],
        collect() {
          this.set(uploads.inUse);
        },
      });
      new Gauge({
        name: 'gex_upload_memory_limit_bytes',
        help: 'Bytes of memory all uploads together may hold (gex serve --max-upload-memory); past it an upload gets 503',
        registers: [this.registry],
        collect() {
          this.set(uploads.total);
        },
      });
    }
    collectProcessMetrics(registry);
  }

  private seriesOf(method: string, route: string, status: number): { record(seconds: number): void } {
    const key = `${method} ${status} ${route}`;
    let found = this.series.get(key);
    if (!found) {
      const count = this.requests.labels(method, route, String(status));
      const duration = this.duration.labels(method, route, String(status));
      found = {
        record(seconds) {
          count.inc();
          duration.observe(seconds);
        },
      };
      this.series.set(key, found);
    }
    return found;
  }

  /** Counts a store failure: a 5xx StoreError by its code, anything unexpected as an internal error. */
  storeError(error: unknown): void {
    if (error instanceof StoreError) {
      if (error.status >= 500) this.storeErrors.inc({ code: error.code });
    } else if (!isClientError(error)) this.storeErrors.inc({ code: KEBOOLA_ERRORS.internalError.code });
  }

  /** Counts an answered request (a ResponseObserver). */
  readonly observe: ResponseObserver = (request, reply, route) => {
    this.seriesOf(request.method, route, reply.statusCode).record(reply.elapsedTime / 1000);
  };

  /** Adds the error count and `GET /metrics` (no token: see docs/operations.md) to `app`; `observe` counts requests. */
  register(app: FastifyInstance): void {
    app.addHook('onError', (_request, _reply, error, done) => {
      this.storeError(error);
      done();
    });
    app.get('/metrics', async (_request, reply) => {
      const text = await this.registry.metrics();
      return reply
        .code(200)
        .header('content-type', this.registry.contentType)
        .header('cache-control', 'no-store')
        .send(text);
    });
  }
}

/** fastify's own refusals (bad URL, body too large, …) carry a 4xx statusCode: not the store's fault. */
function isClientError(error: unknown): boolean {
  const status = (error as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500;
}
