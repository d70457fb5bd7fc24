import type { FastifyInstance } from 'fastify';
import { fromPlain } from '../../src/json/index.js';
import { silentLogger } from '../../src/common/logger.js';
import { JobPlatform } from '../../src/jobs/job-platform.js';
import { buildServer } from '../../src/server/app.js';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import { storeBackends, type BackendFactory } from './store.js';

/** Path prefixes of the two URL forms (docs/storage-api.md#paths). */
export const BRANCH = '/v2/storage/branch/default';
export const DEPRECATED = '/v2/storage';
export const COMPONENT = 'ex-generic-v2';

/**
 * A response body as JSON.parse gives it. Tests walk arbitrary response shapes and assert on them,
 * so this one alias is `any` rather than casting at every step.
 */
export type Json = any;

export interface ApiResponse {
  status: number;
  contentType: string | null;
  text: string;
  /** JSON.parse of the body (undefined when empty) */
  body: Json;
}

export interface RequestOptions {
  /** token header value; null = send none; default: the server's main token */
  token?: string | null;
  /** sent as JSON.stringify(json) with Content-Type: application/json */
  json?: unknown;
  /** sent verbatim with Content-Type: application/json */
  rawJson?: string;
  /** sent as application/x-www-form-urlencoded; a string is sent verbatim */
  form?: string | Record<string, string>;
  /** any other body, sent without a Content-Type unless headers set one */
  body?: string;
  headers?: Record<string, string>;
}

/** `describe` once per store backend (SQLite; PostgreSQL with GEX_TEST_POSTGRES); `body` gets it. */
export function describeEachBackend(title: string, body: (backend: BackendFactory) => void): void {
  for (const backend of storeBackends()) describe(`${title} (${backend.name})`, () => body(backend));
}

/**
 * Starts a TestServer before the tests of the enclosing `describe` and closes it after them; the
 * returned function gives the running server (`server().get(…)`).
 */
export function useTestServer(options: Parameters<typeof TestServer.start>[0] = {}): () => TestServer {
  let server: TestServer | undefined;
  before(async () => {
    server = await TestServer.start(options);
  });
  after(async () => server?.close());
  return () => {
    if (!server) throw new Error('the test server starts in before(): use it inside a test or hook');
    return server;
  };
}

/**
 * A real gex Storage API server on a free port over a fresh store (SQLite in a temp folder unless
 * another backend is given), with a token of project "alpha", and a fetch-based client.
 */
export class TestServer {
  private constructor(
    readonly app: FastifyInstance,
    readonly backend: EmbeddedBackend,
    readonly baseUrl: string,
    readonly token: string,
    private readonly dispose: () => Promise<void>,
    /** the store's SQLite file or PostgreSQL URL, for a second connection */
    readonly location: string,
  ) {}

  static async start(
    options: { bodyLimit?: number; backend?: BackendFactory; requestTimeoutMs?: number; fileLimit?: number } = {},
  ): Promise<TestServer> {
    const { backend, dispose, location } = await (options.backend ?? storeBackends()[0]).open();
    await backend.importComponents(
      fromPlain([{ id: 'keboola.wr-db', type: 'writer', name: 'DB writer', description: 'Writes tables' }]),
    );
    const { token } = await backend.createToken({ description: 'alpha admin', project: 'alpha' });
    // what gex serve serves, but no worker runs the queue's jobs and no schedule fires
    const platform = await JobPlatform.open(backend, { logger: silentLogger(), storageJobs: {} });
    await platform.start();
    const app = await buildServer({
      backend,
      ...platform.served,
      bodyLimit: options.bodyLimit,
      requestTimeoutMs: options.requestTimeoutMs,
      fileLimit: options.fileLimit,
    });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    return new TestServer(
      app,
      backend,
      address,
      token,
      async () => {
        await platform.stop();
        await dispose();
      },
      location,
    );
  }

  /**
   * A token of `project` (default alpha); `master` makes a master token (token management over
   * HTTP), `runner` a runner token (receives secrets decrypted).
   */
  async createToken(
    options: { description?: string; readOnly?: boolean; master?: boolean; runner?: boolean; project?: string } = {},
  ): Promise<string> {
    const { token } = await this.backend.createToken({
      description: options.description ?? 'test token',
      readOnly: options.readOnly,
      canManageTokens: options.master,
      runner: options.runner,
      project: options.project ?? 'alpha',
    });
    return token;
  }

  async request(method: string, urlPath: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? this.token : options.token;
    if (token !== null) headers['X-StorageApi-Token'] = token;
    let body: string | undefined = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    } else if (options.rawJson !== undefined) {
      body = options.rawJson;
      headers['content-type'] = 'application/json';
    } else if (options.form !== undefined) {
      body = typeof options.form === 'string' ? options.form : new URLSearchParams(options.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    // bytes, not a string: fetch would add `Content-Type: text/plain` to a string body
    const bytes = body === undefined ? undefined : new TextEncoder().encode(body);
    const response = await fetch(this.baseUrl + urlPath, { method, headers, body: bytes });
    const text = await response.text();
    const contentType = response.headers.get('content-type');
    // CSV bodies (table previews) are text only
    const parsed = text === '' || contentType?.startsWith('text/csv') ? undefined : JSON.parse(text);
    return { status: response.status, contentType, text, body: parsed };
  }

  get(urlPath: string, options?: RequestOptions): Promise<ApiResponse> {
    return this.request('GET', urlPath, options);
  }

  post(urlPath: string, options?: RequestOptions): Promise<ApiResponse> {
    return this.request('POST', urlPath, options);
  }

  put(urlPath: string, options?: RequestOptions): Promise<ApiResponse> {
    return this.request('PUT', urlPath, options);
  }

  delete(urlPath: string, options?: RequestOptions): Promise<ApiResponse> {
    return this.request('DELETE', urlPath, options);
  }

  /** Creates a configuration (JSON) and returns its body; fails the test on a non-201. */
  async createConfig(fields: Record<string, unknown>, prefix = BRANCH, component = COMPONENT): Promise<Json> {
    const res = await this.post(`${prefix}/components/${component}/configs`, { json: fields });
    if (res.status !== 201) throw new Error(`create configuration failed: ${res.status} ${res.text}`);
    return res.body;
  }

  async createRow(configId: string, fields: Record<string, unknown>, prefix = BRANCH): Promise<Json> {
    const res = await this.post(`${prefix}/components/${COMPONENT}/configs/${configId}/rows`, { json: fields });
    if (res.status !== 201) throw new Error(`create row failed: ${res.status} ${res.text}`);
    return res.body;
  }

  async close(): Promise<void> {
    await this.app.close();
    await this.dispose();
  }
}

/** `…/components/ex-generic-v2/configs[/id…]` in the branch form. */
export function configsPath(...rest: string[]): string {
  return [`${BRANCH}/components/${COMPONENT}/configs`, ...rest.map(encodeURIComponent)].join('/');
}
