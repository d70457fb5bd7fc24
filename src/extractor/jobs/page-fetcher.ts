import type { Logger } from '../../common/logger.js';
import type { HttpClient } from '../http/http-client.js';
import type { HttpRequest, HttpResponse } from '../http/types.js';
import type { PageRequest, Paginator } from '../pagination/paginator.js';

export interface FetchedPage {
  request: HttpRequest;
  response: HttpResponse;
}

interface Ahead {
  controller: AbortController;
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
  private readonly stopOnAbort = () => this.close();

  constructor(
    private readonly client: HttpClient,
    private readonly build: (page: PageRequest) => HttpRequest,
    private readonly paginator: Paginator,
    private readonly job: PageRequest,
    private readonly options: {
      /** pages of this job in flight at most (`api.pagination.concurrency`); the client's adaptive limit may lower it */
      pages: number;
      /** the job's logger: the client's retry warnings name the job */
      logger?: Logger;
      /** cancels the request being fetched and every page fetched ahead (the run failed elsewhere) */
      signal?: AbortSignal;
    },
  ) {
    options.signal?.addEventListener('abort', this.stopOnAbort, { once: true });
  }

  /** Pages in flight at most, 1 when the paginator cannot predict its next requests. */
  get parallelPages(): number {
    return typeof this.paginator.predict === 'function' ? this.options.pages : 1;
  }

  /** The response for `page` (the paginator's current request), starting the next ones ahead. */
  async fetch(page: PageRequest): Promise<FetchedPage> {
    const request = this.build(page);
    const key = keyOf(request);
    const ready = this.ahead.get(key);
    this.ahead.delete(key);
    const result = ready
      ? ready.result
      : this.client.send(request, { logger: this.options.logger, signal: this.options.signal });
    this.fetchAhead();
    return { request, response: await result };
  }

  /** Cancels every page still being fetched ahead (the job ended). */
  close(): void {
    this.options.signal?.removeEventListener('abort', this.stopOnAbort);
    for (const { controller } of this.ahead.values()) controller.abort();
    this.ahead.clear();
  }

  private fetchAhead(): void {
    if (this.parallelPages <= 1) return;
    const count = Math.min(this.parallelPages, this.client.concurrency.current) - 1;
    const predicted = this.paginator.predict!(this.job, count).map((page) => this.build(page));
    const wanted = new Set(predicted.map(keyOf));
    for (const [key, ahead] of this.ahead) {
      if (!wanted.has(key)) {
        ahead.controller.abort();
        this.ahead.delete(key);
      }
    }
    for (const request of predicted) {
      const key = keyOf(request);
      if (!this.ahead.has(key)) this.startAhead(key, request);
    }
  }

  private startAhead(key: string, request: HttpRequest): void {
    const controller = new AbortController();
    const result = this.client.send(request, { signal: controller.signal, logger: this.options.logger });
    // a page fetched ahead that is never asked for may fail unobserved
    result.catch(() => undefined);
    this.ahead.set(key, { controller, result });
  }
}
