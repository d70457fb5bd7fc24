import type { FixtureHandler } from './fixture-server.js';

export interface PagedApiOptions {
  /** number of pages holding records; the page after the last one is empty */
  pages: number;
  recordsPerPage: number;
  /** build one record (index from 0); default: flat records */
  record?: (index: number) => unknown;
  pageParam?: string;
  firstPage?: number;
  /** path prefix the API answers on, e.g. "/api/items" */
  path?: string;
}

export function flatRecord(i: number): Record<string, unknown> {
  return {
    id: i + 1,
    name: `item ${i + 1}`,
    price: (i % 1000) / 4,
    active: i % 2 === 0,
    created: '2026-01-01T00:00:00Z',
  };
}

/** A page-number API over generated records: `?page=N` → `{"items": [...]}`. */
export function pagedApi(options: PagedApiOptions): FixtureHandler {
  const pageParam = options.pageParam ?? 'page';
  const firstPage = options.firstPage ?? 1;
  const build = options.record ?? flatRecord;
  const path = options.path ?? '/items';
  return (request) => {
    const url = new URL(request.url, 'http://fixture');
    if (url.pathname !== path) return undefined;
    const page = Number(url.searchParams.get(pageParam) ?? firstPage) - firstPage;
    const items: unknown[] = [];
    if (page >= 0 && page < options.pages) {
      for (let i = 0; i < options.recordsPerPage; i++) items.push(build(page * options.recordsPerPage + i));
    }
    return { body: { items } };
  };
}
