import { startFixtureServer, type FixtureServer, type RecordedRequest } from './fixture-server/fixture-server.js';
import { runExtraction, type ExtractionRun } from './extraction.js';

/**
 * A fixture API that answers only the exact request targets it is given (path and query under
 * `/api/`), like GE's example mock server: any other request gets 404 and fails the run. So a
 * test both proves the exact URL sequence and feeds each page its own response.
 */
export class PagedApi {
  private pages = new Map<string, unknown>();

  private constructor(private readonly server: FixtureServer) {}

  static async start(): Promise<PagedApi> {
    let api: PagedApi | undefined;
    const server = await startFixtureServer({
      handler: (request) => {
        const key = request.url.replace(/^\/api\//, '');
        return api!.pages.has(key) ? { body: api!.pages.get(key) } : undefined;
      },
    });
    api = new PagedApi(server);
    return api;
  }

  get baseUrl(): string {
    return `${this.server.url}/api/`;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  /** Runs `parameters.api.pagination` and `config.jobs` against `pages` (target → JSON body). */
  async run(
    pagination: unknown,
    jobs: unknown[],
    pages: Record<string, unknown>,
    config: Record<string, unknown> = {},
  ): Promise<PagedRun> {
    this.pages = new Map(Object.entries(pages));
    this.server.requests.length = 0;
    const run = await runExtraction({
      api: { baseUrl: this.baseUrl, pagination },
      config: { outputBucket: 'b', jobs, ...config },
    });
    return { ...run, requests: this.server.requests.map(describeRequest) };
  }

  /** Like run(), for a run that must fail; resolves to its error and the requests sent before. */
  async failure(
    pagination: unknown,
    jobs: unknown[],
    pages: Record<string, unknown>,
  ): Promise<{ error: Error; requests: string[] }> {
    try {
      await this.run(pagination, jobs, pages);
    } catch (error) {
      return { error: error as Error, requests: this.server.requests.map(describeRequest) };
    }
    throw new Error('the run was expected to fail');
  }
}

export interface PagedRun extends ExtractionRun {
  /** `target` for GET, `METHOD target body` otherwise; targets relative to `/api/` */
  requests: string[];
}

function describeRequest(r: RecordedRequest): string {
  const target = r.url.replace(/^\/api\//, '');
  return r.method === 'GET' ? target : `${r.method} ${target} ${r.body}`;
}

/** `{items: [{id, name}, …]}` — the page shape of GE's examples. */
export function items(...ids: number[]): { items: Array<{ id: number; name: string }> } {
  return { items: ids.map((id) => ({ id, name: `user ${id}` })) };
}
