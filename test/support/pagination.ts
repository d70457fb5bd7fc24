import { decodeJson, fromPlain, isJsonObject, toPlain, type JsonObject, type JsonValue } from '../../src/json/index.js';
import { phpHttpBuildQuery } from '../../src/php/index.js';
import type { JobMethod } from '../../src/extractor/config/job-config.js';
import { createPaginator } from '../../src/extractor/pagination/factory.js';
import { Stop, type PageRequest, type Paginator, type ReceivedPage } from '../../src/extractor/pagination/paginator.js';

/** A paginator from plain `api.pagination` JSON. */
export function paginatorFor(config: Record<string, unknown>, scroller: string | null = null): Paginator {
  return createPaginator(fromPlain(config), 'parameters.api.pagination', scroller);
}

/** A job's page request. */
export function jobRequest(
  endpoint = 'users',
  params: Record<string, unknown> = {},
  method: JobMethod = 'GET',
): PageRequest {
  return { endpoint, params: fromPlain(params) as JsonObject, method };
}

/** A received page: the records are `data`, else the response's `items`, else the response if it is a list. */
export function page(response: unknown, data?: unknown[]): ReceivedPage {
  const value = typeof response === 'string' ? decodeJson(response) : fromPlain(response);
  const records = data
    ? (fromPlain(data) as JsonValue[])
    : isJsonObject(value) && Array.isArray(value.get('items'))
      ? (value.get('items') as JsonValue[])
      : Array.isArray(value)
        ? value
        : [];
  return { request: jobRequest(), response: value, data: records };
}

/** A next request as plain data (fails on a Stop). */
export function plainRequest(next: PageRequest | Stop): { endpoint: string; method: string; params: unknown } {
  if (next instanceof Stop) throw new Error(`expected a request, got a stop: ${next.reason}`);
  return { endpoint: next.endpoint, method: next.method, params: toPlain(next.params) };
}

/** `endpoint?query` (GET query of the params) — a compact view of a request (fails on a Stop). */
export function show(request: PageRequest | Stop): string {
  if (request instanceof Stop) throw new Error(`expected a request, got a stop: ${request.reason}`);
  const query = phpHttpBuildQuery(request.params);
  return `${request.method === 'GET' ? '' : `${request.method} `}${request.endpoint}${query ? `?${query}` : ''}`;
}

/**
 * Runs a paginator like the job loop: first(), then next() after each response, until a Stop or
 * the responses run out. Returns the requests made and the stop reason (null if none).
 */
export function drive(
  paginator: Paginator,
  job: PageRequest,
  responses: unknown[],
): { requests: string[]; stop: string | null } {
  const requests = [show(paginator.first(job))];
  for (const response of responses) {
    const next = paginator.next(job, page(response));
    if (next instanceof Stop) return { requests, stop: next.reason };
    requests.push(show(next));
  }
  return { requests, stop: null };
}

/** `{items: [{id}, …]}` */
export function ids(...values: unknown[]): { items: Array<{ id: unknown }> } {
  return { items: values.map((id) => ({ id })) };
}
