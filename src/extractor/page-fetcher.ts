import type { Logger } from '../common/logger.js';
import type { HttpClient } from './http/http-client.js';
import type { HttpRequest, HttpResponse } from './http/types.js';
import type { PageRequest, Paginator } from './pagination/paginator.js';

export interface FetchedPage {
  request: HttpRequest;
  response: HttpResponse;
}

interface Ahead {
  /** none for the one request a sequential loop sends ahead: it is always used (or the run ends) */
  controller?: AbortController;
  result: Promise<HttpResponse>;
}

function keyOf(request: HttpRequest): string {
  return `${request.method} ${request.url}\n${request.body ?? ''}`;
}

/**
 * Fetches the pages of one job instance. When the paginator can predict its next requests
 * (page numbers or offsets with a limit) and the client allows more than one request in flight,
 * the predicted pages are requested ahead; the job loop still asks for pages one by one, in order,
 * through the sequential paginator, and a page fetched ahead is used only if it is exactly the
 * request the loop asks for. So the requests that matter, the stop decision and the output are the
 * same as without parallelism; pages fetched past the end are cancelled or discarded.
 */
export class PageFetcher {
  private readonly ahead = new Map<string, Ahead>();
  private prefetched: { page: PageRequest; request: HttpRequest } | undefined;

  constructor(
    private readonly client: HttpClient,
    private readonly build: (page: PageRequest) => HttpRequest,
    private readonly paginator: Paginator,
    private readonly job: PageRequest,
    /** the job's logger: the client's retry warnings name the job */
    private readonly logger?: Logger,
  ) {}

  get parallel(): boolean {
    return this.client.concurrency.maximum > 1 && typeof this.paginator.predict === 'function';
  }

  /** The response for `page` (the paginator's current request), starting the next ones ahead. */
  async fetch(page: PageRequest): Promise<FetchedPage> {
    const request = this.prefetched?.page === page ? this.prefetched.request : this.build(page);
    this.prefetched = undefined;
    const key = keyOf(request);
    const ready = this.ahead.get(key);
    this.ahead.delete(key);
    const result = ready ? ready.result : this.client.send(request, { logger: this.logger });
    this.fetchAhead();
    return { request, response: await result };
  }

  /**
   * Starts the request for `page`, which the loop will ask for next, unless it is already on its
   * way; `fetch(page)` then takes it.
   */
  prefetch(page: PageRequest): void {
    const request = this.build(page);
    // fetch() reuses this very request: building again could differ (e.g. a time-based parameter)
    this.prefetched = { page, request };
    const key = keyOf(request);
    if (!this.ahead.has(key)) this.startAhead(key, request, this.parallel);
  }

  /** Cancels every page still being fetched ahead (the job ended). */
  close(): void {
    for (const { controller } of this.ahead.values()) controller?.abort();
    this.ahead.clear();
  }

  private fetchAhead(): void {
    if (!this.parallel) return;
    const predicted = this.paginator.predict!(this.job, this.client.concurrency.current - 1).map((page) => this.build(page));
    const wanted = new Set(predicted.map(keyOf));
    for (const [key, ahead] of this.ahead) {
      if (!wanted.has(key)) {
        ahead.controller?.abort();
        this.ahead.delete(key);
      }
    }
    for (const request of predicted) {
      const key = keyOf(request);
      if (!this.ahead.has(key)) this.startAhead(key, request, true);
    }
  }

  private startAhead(key: string, request: HttpRequest, cancellable: boolean): void {
    // an AbortController per request costs (got listens on its signal): only where it may be used
    const controller = cancellable ? new AbortController() : undefined;
    const result = this.client.send(request, { signal: controller?.signal, logger: this.logger });
    // a page fetched ahead that is never asked for may fail unobserved
    result.catch(() => undefined);
    this.ahead.set(key, { controller, result });
  }
}
