import nock from 'nock';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/common/logger.js';
import { createAuth, type AuthMethod, type AuthRuntime } from '../../src/extractor/auth/index.js';
import {
  buildApiSettings,
  DEFAULT_RETRY,
  type ApiSettings,
  type RetrySettings,
} from '../../src/extractor/config/api-settings.js';
import { flattenContext, UserFunctions } from '../../src/extractor/functions/user-functions.js';
import { HttpClient } from '../../src/extractor/http/http-client.js';
import { buildHttpRequest } from '../../src/extractor/http/request-builder.js';
import type { HttpRequest } from '../../src/extractor/http/types.js';
import { RetryPolicy } from '../../src/extractor/http/retry-policy.js';
import type { PageRequest } from '../../src/extractor/pagination/paginator.js';
import { fromPlain, type JsonObject } from '../../src/json/index.js';

export const ORIGIN = 'http://api.test';

/** What the server received, byte for byte where it matters. */
export interface Received {
  method: string;
  /** raw request target: path + query exactly as sent */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export type Responder = (request: Received) => { status?: number; body?: unknown; headers?: Record<string, string> };

/** nock on ORIGIN recording every request; the responder decides the answer (default `[]`). */
export function recordRequests(responder: Responder = () => ({ body: [] })): Received[] {
  const received: Received[] = [];
  const reply = function (
    this: { req: { method: string; headers: Record<string, string | string[] | undefined> } },
    uri: string,
    body: unknown,
  ) {
    const request: Received = {
      method: this.req.method,
      path: uri,
      headers: this.req.headers,
      body: typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body),
    };
    received.push(request);
    const answer = responder(request);
    const payload = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? []);
    return [answer.status ?? 200, payload, { 'Content-Type': 'application/json', ...answer.headers }] as [
      number,
      string,
      Record<string, string>,
    ];
  };
  nock(ORIGIN)
    .persist()
    .get(() => true)
    .reply(reply)
    .post(() => true)
    .reply(reply);
  return received;
}

export interface AuthSetup {
  auth: AuthMethod;
  api: ApiSettings;
  client: HttpClient;
  /** secrets the auth registered for masking */
  secrets: string[];
  /** waits the client would have slept (retries) */
  waits: number[];
  logs: () => string;
  /** the HTTP request a job page becomes (before auth) */
  request(
    endpoint: string,
    params?: Record<string, unknown>,
    method?: PageRequest['method'],
    headers?: Record<string, unknown>,
  ): HttpRequest;
  close(): void;
}

export interface AuthSetupOptions {
  api: Record<string, unknown>;
  config?: Record<string, unknown>;
  authorization?: Record<string, unknown>;
  runtime?: Partial<AuthRuntime>;
  retry?: Partial<RetrySettings>;
}

/** An auth built the way extract() builds it for one configuration, and a client that applies it. */
export function setupAuth(options: AuthSetupOptions): AuthSetup {
  const apiNode = fromPlain({ baseUrl: `${ORIGIN}/api/`, ...options.api }) as JsonObject;
  const config = fromPlain(options.config ?? {}) as JsonObject;
  const attributes = new Map(config);
  attributes.delete('jobs');
  const functions = new UserFunctions();
  const attr = flattenContext(attributes);
  const api = buildApiSettings(apiNode, config, (v) => functions.evaluate(v, { attr }));
  let text = '';
  const logger = createLogger({
    level: 'debug',
    stdout: new Writable({ write: (chunk, _e, done) => ((text += String(chunk)), done()) }),
    stderr: new Writable({ write: (chunk, _e, done) => ((text += String(chunk)), done()) }),
  });
  const secrets: string[] = [];
  const auth = createAuth({
    api: apiNode,
    attributes,
    attr,
    authorization: fromPlain(options.authorization ?? {}) as JsonObject,
    settings: api,
    functions,
    logger,
    secrets: { add: (s) => secrets.push(s) },
    runtime: options.runtime,
  });
  if (!auth) throw new Error('no auth configured');
  const waits: number[] = [];
  const client = new HttpClient({
    retry: new RetryPolicy({ ...DEFAULT_RETRY, ...options.retry }),
    connectTimeoutMs: 2000,
    requestTimeoutMs: 2000,
    logger,
    sleep: async (ms) => {
      waits.push(ms);
    },
    auth,
  });
  return {
    auth,
    api,
    client,
    secrets,
    waits,
    logs: () => text,
    request: (endpoint, params = {}, method = 'GET', headers = {}) =>
      buildHttpRequest(
        { endpoint, params: fromPlain(params) as JsonObject, method },
        fromPlain(headers) as JsonObject,
        api,
      ),
    close: () => client.close(),
  };
}

/** A clock that can be moved and a nonce source that counts, for deterministic signatures. */
export function fakeRuntime(start = 1700000000): AuthRuntime & { tick(seconds?: number): void; time: number } {
  let nonces = 0;
  const runtime = {
    time: start,
    now: () => runtime.time,
    nonce: (length: number) => String(++nonces).padStart(length, '0'),
    tick: (seconds = 1) => {
      runtime.time += seconds;
    },
  };
  return runtime;
}

export function header(request: Received, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}
