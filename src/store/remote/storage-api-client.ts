import { got, RequestError, TimeoutError, type Got, type Method, type PlainResponse, type Response } from 'got';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isUserErrorCode, type UserErrorCode } from '../../common/error-catalogue.js';
import { ApplicationError, UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { describeNetworkError, unfixableNetworkError } from '../../common/network-errors.js';
import { formatClockTime, sentence } from '../../common/text.js';
import {
  decodeJson,
  isJsonObject,
  JsonSyntaxError,
  stringifyExact,
  type JsonObject,
  type JsonValue,
} from '../../json/index.js';
import { StoreError } from '../store-error.js';
import { tokenRefused, type TokenOrigin } from '../token-refusal.js';
import { asRequestError } from '../../extractor/http/request-error.js';
import {
  RetryBudget,
  RUN_STORE_RETRY,
  STORE_TIMEOUT_VARIABLE,
  SYSTEM_CLOCK,
  type Clock,
  type RetryBudgetSettings,
} from './retry-budget.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

export interface StorageApiClientOptions {
  /** Storage API address, e.g. https://connection.keboola.com or http://127.0.0.1:8080 */
  url: string;
  token: string;
  /** time budget and retries of one call (default RUN_STORE_RETRY); the three below override parts of it */
  retry?: RetryBudgetSettings;
  /** retries of a failed call (the official PHP client: 11) */
  maxRetries?: number;
  /** first retry delay in ms, doubling (the official client: 1000) */
  retryBaseMs?: number;
  /** the longest one attempt may take */
  timeoutMs?: number;
  /** replaced in tests: the retry loop's time and waits */
  clock?: Clock;
  logger?: Logger;
  /** another API of the stack with the same token (the Job Queue): its name in messages and its path prefix */
  service?: { name: string; path: string };
  /** where the token came from (`--token`, `KBC_TOKEN`), named when the API refuses it */
  tokenOrigin?: TokenOrigin;
}

/** What one call may differ in: a size limit on the answer, no retry (a call that is not idempotent), headers. */
export interface CallOptions {
  maxBytes?: number;
  /** what the message about a larger answer suggests (default: fewer rows or columns) */
  tooLargeHint?: string;
  /** false: one attempt only (POST /jobs: a retry after a lost answer could queue the job twice) */
  retry?: boolean;
  headers?: Record<string, string>;
}

/** Query parameters of a call: a record, or URLSearchParams for a repeated one (`whereValues[]`). */
export type QueryParams = Record<string, string> | URLSearchParams;

const VERSION_CONFLICT = KEBOOLA_ERRORS.configurationVersionConflict.code;

/**
 * The wire side of the remote store: JSON calls to `/v2/storage/…` with the token, retried like the
 * official client does (network errors, 5xx except 501, 409 version conflicts; exponential backoff)
 * within a time budget per call, so that an unreachable store fails in bounded time. The token
 * never goes to another origin: a redirect elsewhere is refused.
 */
export class StorageApiClient {
  private readonly http: Got;
  private readonly retry: RetryBudgetSettings;
  private readonly origin: string;
  private readonly name: string;
  private readonly path: string;

  constructor(private readonly options: StorageApiClientOptions) {
    const base = options.retry ?? RUN_STORE_RETRY;
    this.retry = {
      ...base,
      maxRetries: options.maxRetries ?? base.maxRetries,
      baseDelayMs: options.retryBaseMs ?? base.baseDelayMs,
      attemptTimeoutMs: options.timeoutMs ?? base.attemptTimeoutMs,
    };
    this.origin = new URL(options.url).origin;
    this.name = options.service?.name ?? 'Storage API';
    this.path = options.service?.path ?? 'v2/storage/';
    this.http = got.extend({
      prefixUrl: options.url.replace(/\/+$/, ''),
      throwHttpErrors: false,
      retry: { limit: 0 },
      responseType: 'text',
      // same-origin redirects only: the token must not reach another origin (call() explains a refusal)
      followRedirect: (response: PlainResponse) => this.sameOrigin(redirectTarget(response)),
      headers: {
        'X-StorageApi-Token': options.token,
        'User-Agent': 'gex Storage API client',
        Accept: 'application/json',
      },
    });
  }

  private sameOrigin(url: URL | null): boolean {
    return url !== null && url.origin === this.origin;
  }

  /** Whether `url` is an address of this API's own origin (where the token may go). */
  isOwnAddress(url: string): boolean {
    try {
      return this.sameOrigin(new URL(url));
    } catch {
      return false;
    }
  }

  /** What a transfer to a pre-signed address shares with this client: its budget, clock and log, never the token. */
  transferOptions(): { retry: RetryBudgetSettings; clock?: Clock; logger?: Logger; issuer: string } {
    return {
      retry: this.retry,
      clock: this.options.clock,
      logger: this.options.logger,
      issuer: `The ${this.name} at ${this.options.url}`,
    };
  }

  async call(
    method: Method,
    path: string,
    payload?: JsonObject,
    query?: QueryParams,
    options: CallOptions = {},
  ): Promise<JsonValue> {
    const { body } = await this.send(method, path, { ...options, payload, query });
    // an empty answer (204) is null; text that is not JSON is returned as it is
    return body === '' ? null : safeDecode(body);
  }

  /**
   * A call whose answer is text (a CSV of data-preview): its body as it is, with its status (202
   * answers of asynchronous calls included). Errors are mapped as for call(). An answer over
   * `maxBytes` is refused rather than held in memory.
   */
  async callText(
    method: Method,
    path: string,
    query: QueryParams | undefined,
    maxBytes: number,
  ): Promise<{ status: number; body: string }> {
    return this.send(method, path, { query, maxBytes, accept: 'text/csv, application/json' });
  }

  private async send(
    method: Method,
    path: string,
    options: CallOptions & { payload?: JsonObject; query?: QueryParams; accept?: string },
  ): Promise<{ status: number; body: string }> {
    const { payload, query, maxBytes } = options;
    // the index itself is `v2/storage` (no trailing slash)
    const url = path === '' ? this.path.replace(/\/$/, '') : `${this.path}${path}`;
    const budget = new RetryBudget(this.retry, this.options.clock ?? SYSTEM_CLOCK);
    for (let attempt = 1; ; attempt++) {
      let retryReason: string;
      let failure: () => Error;
      const timeout = { connect: budget.connectTimeoutMs(), request: budget.attemptTimeoutMs() };
      try {
        const request = this.http(url, {
          method,
          searchParams: query,
          body: payload ? stringifyExact(payload) : undefined,
          headers: {
            ...(payload ? { 'Content-Type': 'application/json' } : {}),
            ...(options.accept ? { Accept: options.accept } : {}),
            ...options.headers,
          },
          timeout,
        });
        let tooLarge = false;
        if (maxBytes !== undefined) {
          // on() hands back the same promise, awaited below
          void request.on('downloadProgress', (progress) => {
            if (progress.transferred > maxBytes && !tooLarge) {
              tooLarge = true;
              request.cancel();
            }
          });
        }
        let response: Response<string>;
        try {
          response = await request;
        } catch (error) {
          if (tooLarge)
            throw new UserError(
              'GEX_STORAGE_API_REFUSED',
              `The ${this.name} at ${this.options.url} answered ${method} ${url} with more than ${maxBytes} bytes; ${options.tooLargeHint ?? 'ask for fewer rows or columns'}.`,
            );
          throw error;
        }
        const elsewhere = redirectTarget(response);
        if (elsewhere && !this.sameOrigin(elsewhere)) {
          throw new UserError(
            'GEX_STORAGE_API_REFUSED',
            `The ${this.name} at ${this.options.url} redirected ${method} ${url} to another origin, ${elsewhere.origin}; gex does not send the token there. ` +
              'If that is the right address, use it as --store (KBC_URL).',
          );
        }
        const text = response.body;
        if (response.statusCode < 300) return { status: response.statusCode, body: text };
        const { code, message, gexCode } = refusalOf(response, text);
        const retryable =
          (response.statusCode >= 500 && response.statusCode !== 501) ||
          (response.statusCode === 409 && code === VERSION_CONFLICT);
        if (!retryable) throw this.storeError(response.statusCode, code, message, gexCode);
        retryReason = `${response.statusCode}${code ? ` ${code}` : ''}`;
        failure = () =>
          response.statusCode >= 500
            ? new ApplicationError(
                'GEX_STORAGE_API_FAILED',
                `${this.name} ${method} ${url} failed: [${response.statusCode}] ${message}${this.gaveUp(attempt, budget)}`,
              )
            : this.storeError(response.statusCode, code, message, gexCode);
      } catch (error) {
        if (!(error instanceof RequestError)) throw error;
        const unfixable = unfixableNetworkError(error, 'NODE_EXTRA_CA_CERTS=<its CA file>');
        const reached = `The ${this.name} at ${this.options.url} cannot be reached: ${reachFailure(error, timeout)}`;
        // the same on every attempt (a host name that does not exist, a certificate not trusted): not retried
        if (unfixable)
          throw new UserError('GEX_STORAGE_API_UNREACHABLE', `${sentence(reached)} Not retried: ${unfixable}`, {
            cause: error,
          });
        retryReason = describeNetworkError(error);
        failure = () =>
          new UserError('GEX_STORAGE_API_UNREACHABLE', `${reached}${this.gaveUp(attempt, budget)}`, { cause: error });
      }
      const delay = options.retry === false ? null : budget.delayBefore(attempt);
      if (delay === null) throw failure();
      // at the first retry: when the call gives up if the store stays away (its time budget)
      const outlook =
        attempt === 1
          ? `; gives up at ${formatClockTime(budget.deadline(), budget.now())} at the latest (${STORE_TIMEOUT_VARIABLE}: ${this.retry.totalMs / 1000} s)`
          : '';
      // info: a command someone waits for shows only its one-line outcome (it logs at warn)
      this.options.logger?.info(
        `${this.name} ${method} ${url}: ${retryReason}; retry ${attempt} of ${this.retry.maxRetries} in ${(delay / 1000).toFixed(1)} s${outlook}`,
      );
      await budget.sleep(delay);
    }
  }

  /**
   * PUTs `body` (a file's bytes, streamed; `size` of them: its Content-Length) to `url` — an absolute address that must
   * be this API's origin (a File Storage upload address: gex sends no file, and no token, to
   * another host). A 503 (a gex server whose upload memory is full, or whose database is away)
   * kept nothing and left the file prepared: the PUT is sent again, with a new `body()`, after the
   * wait its Retry-After asks for, within the call's budget. Any other failure is not retried: a
   * file is uploaded once, so the caller starts again with a new file. Returns the decoded answer.
   */
  async upload(url: string, body: () => NodeJS.ReadableStream, size: number): Promise<JsonValue> {
    const target = this.checkSameOrigin(url, 'upload a file to');
    const budget = new RetryBudget(this.retry, this.options.clock ?? SYSTEM_CLOCK);
    for (let attempt = 1; ; attempt++) {
      let response: Response<string>;
      try {
        response = await this.http(target, {
          prefixUrl: '',
          method: 'PUT',
          // opened only once the address is checked
          body: body() as Readable,
          headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': String(size) },
          // a large file takes as long as it takes: only a connection that goes quiet fails
          timeout: { connect: budget.connectTimeoutMs(), socket: budget.attemptTimeoutMs() },
        });
      } catch (error) {
        throw this.unreachable(error, 'PUT', target.pathname);
      }
      const delay =
        response.statusCode === 503 ? budget.delayBefore(attempt, retryAfterMs(response.headers['retry-after'])) : null;
      if (delay !== null) {
        const { code } = refusalOf(response, response.body);
        this.options.logger?.info(
          `${this.name} PUT ${target.pathname}: 503${code ? ` ${code}` : ''}; retry ${attempt} of ${this.retry.maxRetries} in ${(delay / 1000).toFixed(1)} s`,
        );
        await budget.sleep(delay);
        continue;
      }
      if (response.statusCode >= 300) throw this.refusal(response, response.body, 'PUT', target.pathname);
      return response.body === '' ? null : safeDecode(response.body);
    }
  }

  /**
   * GETs `url` (an absolute address of this API's origin, e.g. a file's `url`) and streams the
   * answer's bytes into `out`, never holding them whole. One attempt. Returns the bytes written.
   */
  async download(url: string, out: NodeJS.WritableStream): Promise<number> {
    const target = this.checkSameOrigin(url, 'download a file from');
    const budget = new RetryBudget(this.retry, this.options.clock ?? SYSTEM_CLOCK);
    const stream = this.http.stream(target, {
      prefixUrl: '',
      headers: { Accept: 'application/octet-stream, text/csv' },
      timeout: { connect: budget.connectTimeoutMs(), socket: budget.attemptTimeoutMs() },
    });
    let response: PlainResponse;
    try {
      response = await new Promise<PlainResponse>((resolve, reject) => {
        stream.once('response', resolve);
        stream.once('error', reject);
      });
    } catch (error) {
      throw this.unreachable(asRequestError(error, stream), 'GET', target.pathname);
    }
    if (response.statusCode >= 300) {
      // an error answer is small; more than 64 KiB of it is not read
      let text = '';
      for await (const chunk of stream) {
        text += String(chunk);
        if (text.length > 65536) break;
      }
      stream.destroy();
      throw this.refusal(response, text, 'GET', target.pathname);
    }
    let bytes = 0;
    stream.on('data', (chunk: Buffer) => (bytes += chunk.length));
    try {
      await pipeline(stream, out);
    } catch (error) {
      throw this.unreachable(asRequestError(error, stream), 'GET', target.pathname);
    }
    return bytes;
  }

  /** `url` parsed when it is this API's origin; else refused, naming both. */
  private checkSameOrigin(url: string, doing: string): URL {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new UserError(
        'GEX_STORAGE_API_REFUSED',
        `The ${this.name} at ${this.options.url} asked gex to ${doing} an address that is not a URL; is it a Storage API?`,
      );
    }
    if (target.origin !== this.origin)
      throw new UserError(
        'GEX_STORAGE_API_REFUSED',
        `The ${this.name} at ${this.options.url} asked gex to ${doing} another origin, ${displayOrigin(target)}; ` +
          "gex sends files and the token only to the Storage API's own address (a Keboola stack keeps files in its cloud storage, which gex does not write to).",
      );
    return target;
  }

  /** A refusal of the API as an error: a refused token (401) in the one wording every command gives it. */
  private storeError(status: number, code: string, message: string, gexCode: UserErrorCode | undefined): StoreError {
    if (status === 401)
      return tokenRefused(`the ${this.name} at ${this.options.url}`, this.options.tokenOrigin, message, code);
    return new StoreError(status, code, message, undefined, gexCode);
  }

  /** A failed answer (status ≥ 300) as the error call() gives for it. */
  private refusal(response: PlainResponse, text: string, method: string, path: string): Error {
    const elsewhere = redirectTarget(response);
    if (elsewhere && !this.sameOrigin(elsewhere))
      return new UserError(
        'GEX_STORAGE_API_REFUSED',
        `The ${this.name} at ${this.options.url} redirected ${method} ${path} to another origin, ${elsewhere.origin}; gex does not send the token there.`,
      );
    const { code, message, gexCode } = refusalOf(response, text);
    if (response.statusCode >= 500 && response.statusCode !== 501)
      return new ApplicationError(
        'GEX_STORAGE_API_FAILED',
        `${this.name} ${method} ${path} failed: [${response.statusCode}] ${message}`,
      );
    return this.storeError(response.statusCode, code, message, gexCode);
  }

  /** A network failure of a one-attempt transfer. */
  private unreachable(error: unknown, method: string, path: string): unknown {
    if (!(error instanceof RequestError)) return error;
    return new UserError(
      'GEX_STORAGE_API_UNREACHABLE',
      `The ${this.name} at ${this.options.url} cannot be reached (${method} ${path}): ${describeNetworkError(error)}`,
      { cause: error },
    );
  }

  private gaveUp(attempts: number, budget: RetryBudget): string {
    return attempts === 1 ? '' : ` (${attempts} attempts in ${(budget.elapsedMs() / 1000).toFixed(1)} s)`;
  }
}

/** Where a 3xx response points, or null (not a redirect, or no usable Location). */
function redirectTarget(response: PlainResponse): URL | null {
  const location = response.headers.location;
  if (response.statusCode < 300 || response.statusCode >= 400 || !location) return null;
  try {
    return new URL(location, response.url);
  } catch {
    return null;
  }
}

/** A network failure in plain words (got's timeout messages name its internals). */
function reachFailure(error: RequestError, timeout: { connect: number; request: number }): string {
  if (!(error instanceof TimeoutError)) return error.message;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1).replace(/\.0$/, '')} s`;
  return error.event === 'connect'
    ? `no connection within ${seconds(timeout.connect)}`
    : `no answer within ${seconds(timeout.request)}`;
}

/** Keboola's error body of a refused call: its code, message and (a gex server's) catalogue code. */
function refusalOf(
  response: PlainResponse,
  text: string,
): { code: string; message: string; gexCode: UserErrorCode | undefined } {
  const parsed = text === '' ? null : safeDecode(text);
  // the Job Queue and Scheduler APIs say the status in `code` and their own code in context.errorCode
  const context = isJsonObject(parsed) ? parsed.get('context') : undefined;
  const errorCode = isJsonObject(context) ? context.get('errorCode') : undefined;
  const code = !isJsonObject(parsed)
    ? ''
    : typeof parsed.get('code') !== 'string' && typeof errorCode === 'string'
      ? errorCode
      : String(parsed.get('code') ?? '');
  const message =
    isJsonObject(parsed) && typeof parsed.get('error') === 'string'
      ? String(parsed.get('error'))
      : `${response.statusCode} ${response.statusMessage ?? ''}`.trim();
  // a gex server says its code (gexCode): kept when it is a user error of the catalogue, so the
  // CLI reports the code the server logged; anything else follows the status
  const said = isJsonObject(parsed) ? parsed.get('gexCode') : undefined;
  return { code, message, gexCode: isUserErrorCode(said) ? said : undefined };
}

/** A Retry-After of whole seconds, in milliseconds (at most an hour); null for none or a date. */
function retryAfterMs(header: string | string[] | undefined): number | null {
  const text = (Array.isArray(header) ? header[0] : header)?.trim();
  return text !== undefined && /^\d{1,5}$/.test(text) ? Math.min(Number(text), 3600) * 1000 : null;
}

/** An origin as a message shows it: bounded, no credentials. */
function displayOrigin(url: URL): string {
  return url.origin.slice(0, 200);
}

function safeDecode(text: string): JsonValue {
  try {
    return decodeJson(text);
  } catch (e) {
    if (e instanceof JsonSyntaxError) return text;
    throw e;
  }
}
