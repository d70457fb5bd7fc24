import http from 'node:http';
import https from 'node:https';
import { STATUS_CODES, type IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { got, RequestError, type BeforeRedirectHook, type Got, type PlainResponse } from 'got';
import { UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { describeNetworkError, isConnectFailure, unfixableNetworkError } from '../../common/network-errors.js';
import { formatClockTime, formatDuration } from '../../common/text.js';
import type { AuthMethod } from '../auth/auth-method.js';
import type { HttpRequest, HttpResponse, Send } from './types.js';
import { AdaptiveConcurrency } from './adaptive-concurrency.js';
import { RateLimiter, rateLimitPauseMs } from './rate-limiter.js';
import { exactTargetRequest, wireBody, wireHeaders } from './wire-format.js';
import { curlCodeOf, type RetryDelay, type RetryPolicy } from './retry-policy.js';
import { asRequestError } from './request-error.js';
import { checkAllowedTarget, redirectRules } from './redirect-rules.js';
import { DEFAULT_MAX_RESPONSE_BYTES, readLimited, ResponseTooLarge } from './response-size.js';
import type { AllowedUrlRule } from '../config/allowed-hosts.js';
import { FIRST_CONTACT_MS, ReachedHosts } from './reached-hosts.js';

/**
 * Waiting that counts as retries piling up: once one request has waited this long (or is about to),
 * its retry line says when the last retry would be. A single short wait (a 429 with Retry-After: 1)
 * says only that it retries.
 */
const OUTLOOK_AFTER_MS = 30_000;

export interface HttpClientOptions {
  retry: RetryPolicy;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  logger: Logger;
  /** replaced in tests to observe waits without waiting */
  sleep?: (ms: number) => Promise<void>;
  /** authentication applied to every attempt (GE's auth middleware sits inside the retry one) */
  auth?: AuthMethod | null;
  /** signs every attempt of every request, login requests included, after the auth (GE's AWS signing middleware is innermost) */
  signer?: RequestSigner | null;
  /** requests in flight at most (parallel page fetching); adapts to rate limiting. Default 1. */
  concurrency?: number;
  /** requests per second at most, over every request of this client (`api.http.maxRequestsPerSecond`); absent = no limit */
  maxRequestsPerSecond?: number;
  /** milliseconds; replaced in tests (the rate limiter's clock) */
  now?: () => number;
  /** TLS: a CA replacing the trust store, and a client certificate (PEM with its key) */
  tls?: { caCertificate?: string; clientCertificate?: string };
  /** `image_parameters.allowed_hosts` as a test, applied to every request and redirect hop; absent = any host */
  allowedUrl?: AllowedUrlRule | null;
  /** the largest response body, after decompression (default DEFAULT_MAX_RESPONSE_BYTES) */
  maxResponseBytes?: number;
  /** the run's stop signal: aborts every request in flight and every retry wait */
  signal?: AbortSignal;
  /** the hosts that answered in this run (shared by the clients of a run); default: this client's own */
  reachedHosts?: ReachedHosts;
}

/** Rewrites a request as it is to be sent (a signature over its final bytes). */
export interface RequestSigner {
  sign(request: HttpRequest): Promise<HttpRequest>;
}

/** The final response of one attempt, its body read in full. */
interface Exchange {
  statusCode: number;
  statusMessage?: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface SendOptions {
  /** false for a login request: it goes through this client but bypasses the auth itself */
  authenticate?: boolean;
  /** cancels the request (a page fetched ahead that turned out not to be needed) */
  signal?: AbortSignal;
  /** logs its retries (a job's logger, whose lines name the job); default the client's */
  logger?: Logger;
}

/** A signal of its own that aborts when any source does; `release` unhooks it from them. */
interface FollowingSignal {
  signal: AbortSignal | undefined;
  release: () => void;
}

function followingSignal(sources: AbortSignal[]): FollowingSignal {
  const controller = new AbortController();
  const forwards = sources.map((source) => {
    const forward = () => controller.abort(source.reason);
    if (source.aborted && !controller.signal.aborted) forward();
    source.addEventListener('abort', forward, { once: true });
    return () => source.removeEventListener('abort', forward);
  });
  return { signal: controller.signal, release: () => forwards.forEach((unhook) => unhook()) };
}

/**
 * One signal for one send that aborts when either source does. Not `AbortSignal.any`: Node 20
 * keeps every composite signal alive for as long as a long-lived source (the run's stop signal),
 * so one per request would grow for the whole run.
 */
export function linkedSignal(a: AbortSignal | undefined, b: AbortSignal | undefined): FollowingSignal {
  return a && b ? followingSignal([a, b]) : { signal: a ?? b, release: () => undefined };
}

/**
 * A signal for one request that follows the run's signal. got leaves its abort listener on the
 * signal it is given when a stream ends normally, so handing it the run's signal would keep one
 * listener (and the request it closes over) per page for the whole run.
 */
function requestSignal(parent: AbortSignal | undefined): FollowingSignal {
  return parent ? followingSignal([parent]) : { signal: undefined, release: () => undefined };
}

/** A request cancelled through its signal: nobody waits for its result. */
export class RequestCancelled extends Error {}

export interface HttpStats {
  requests: number;
  retries: number;
  waitedMs: number;
}

/**
 * Sends requests through got with keep-alive connections. Retries follow GE's policy (see
 * RetryPolicy) and are done here rather than by got, because GE retries statuses got never would
 * (e.g. a 202) and reads the retry header its own way. Returns the final response whatever its
 * status; the caller decides what a status means. Redirects are followed under gex's rules
 * (redirectRules: the allowed hosts on every hop, no credential to another origin) and bodies are
 * read up to a size limit.
 */
export class HttpClient {
  /** what auth methods get to send their own requests (a login): this client without the auth */
  readonly sendUnauthenticated: Send = (request, options) => this.send(request, { ...options, authenticate: false });

  private readonly got: Got;
  private readonly agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  readonly stats: HttpStats = { requests: 0, retries: 0, waitedMs: 0 };
  readonly concurrency: AdaptiveConcurrency;
  /** the configured rate and the pauses the API announces (RateLimit headers), for every request */
  readonly rateLimiter: RateLimiter;

  private readonly maxResponseBytes: number;
  private readonly reached: ReachedHosts;
  /** origin pairs already warned about (once per client, not per page) */
  private readonly droppedWarned = new Set<string>();

  constructor(private readonly options: HttpClientOptions) {
    this.concurrency = new AdaptiveConcurrency(options.concurrency ?? 1);
    this.rateLimiter = new RateLimiter({ ratePerSecond: options.maxRequestsPerSecond, now: options.now });
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.reached = options.reachedHosts ?? new ReachedHosts();
    this.got = got.extend({
      throwHttpErrors: false,
      retry: { limit: 0 },
      followRedirect: true,
      maxRedirects: 5,
      // 301/302 become GET without a body, as Guzzle does; 307/308 keep method and body
      methodRewriting: true,
      hooks: {
        beforeRedirect: [
          redirectRules({
            allowed: options.allowedUrl,
            onHeadersDropped: (from, to, names) => {
              if (this.droppedWarned.has(`${from} ${to}`)) return;
              this.droppedWarned.add(`${from} ${to}`);
              options.logger.warn(
                `Redirected from ${from} to another origin, ${to}: headers not sent there: ${names.join(', ')}`,
              );
            },
          }),
          (next, response) => this.signRedirect(next, response),
        ],
      },
      agent: this.agents,
      timeout: { connect: options.connectTimeoutMs, request: options.requestTimeoutMs },
      https: {
        certificateAuthority: options.tls?.caCertificate,
        // one PEM holds both the certificate and its key, as GE's option does
        certificate: options.tls?.clientCertificate,
        key: options.tls?.clientCertificate,
      },
    });
  }

  /**
   * Sends a request, retrying as GE does. The auth (if any) rewrites the request before each
   * attempt; messages and logs show the request as built, without what the auth added.
   */
  async send(request: HttpRequest, sendOptions: SendOptions = {}): Promise<HttpResponse> {
    const { signal, release } = linkedSignal(sendOptions.signal, this.options.signal);
    try {
      return await this.attempts(request, sendOptions, signal);
    } finally {
      release();
    }
  }

  private async attempts(
    request: HttpRequest,
    sendOptions: SendOptions,
    signal: AbortSignal | undefined,
  ): Promise<HttpResponse> {
    const { retry, auth, signer } = this.options;
    const logger = sendOptions.logger ?? this.options.logger;
    const wait = this.options.sleep ?? ((ms: number) => sleep(ms, undefined, { signal }));
    const now = this.options.now ?? Date.now;
    const started = now();
    /** this request's retry waits so far, and whether a retry line said when the last retry would be */
    const retries = { waitedMs: 0, outlookGiven: false };
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) throw new RequestCancelled(`${request.method} ${request.url} was cancelled`);
      checkAllowedTarget(this.options.allowedUrl, request.method, request.url);
      // an announced pause is waited out before the auth and signature, so neither goes stale
      await this.waitOrCancel(wait, this.rateLimiter.pauseLeft(), request, signal);
      const authenticated =
        auth && sendOptions.authenticate !== false
          ? await auth.beforeRequest(request, this.sendUnauthenticated)
          : request;
      const sent = signer ? await signer.sign(authenticated) : authenticated;
      let retryReason: string;
      let retryFields: { status: number } | { errorCode: string };
      let delay: RetryDelay | null;
      /** a connection that could not be made to a host that has not answered in this run */
      let firstContact = false;
      try {
        const { response, startedAt } = await this.concurrency.run(async (startedAt) => {
          // the slot is reserved in the queue slot, just before sending, so send times follow the schedule
          await this.waitOrCancel(wait, this.rateLimiter.reserve(), request, signal);
          this.stats.requests++;
          const received = await this.exchange(sent, request, signal);
          return { response: received, startedAt };
        });
        this.reached.answered(request.url);
        this.notePause(response.headers, logger);
        const raw = response.headers[retry.settings.retryHeader.toLowerCase()];
        const headerValue = Array.isArray(raw) ? raw[0] : raw;
        if (response.statusCode === 429 || headerValue !== undefined) this.concurrency.throttled(startedAt);
        else if (response.statusCode < 400) this.concurrency.succeeded();
        delay = retry.decide(attempt, { status: response.statusCode }, headerValue, request.url);
        if (delay === null) {
          return {
            status: response.statusCode,
            statusMessage: response.statusMessage ?? '',
            headers: response.headers,
            body: response.body,
            attempts: attempt,
          };
        }
        retryReason = `status ${response.statusCode}${STATUS_CODES[response.statusCode] ? ` ${STATUS_CODES[response.statusCode]}` : ''}`;
        retryFields = { status: response.statusCode };
      } catch (error) {
        if (signal?.aborted) throw new RequestCancelled(`${request.method} ${request.url} was cancelled`);
        if (!(error instanceof RequestError)) throw error;
        // a refused redirect (got wraps what its hooks throw): the user's error, never retried
        if (error.cause instanceof UserError) throw error.cause;
        const curl = curlCodeOf(error);
        // what fails the same way every time is not retried, whatever curl.codes lists
        const unfixable = unfixableNetworkError(error);
        delay = unfixable ? null : retry.decide(attempt, { error }, undefined, request.url);
        firstContact = delay !== null && isConnectFailure(error) && !this.reached.hasAnswered(request.url);
        if (firstContact && now() - started + delay!.ms > FIRST_CONTACT_MS)
          throw this.neverAnswered(request, error, attempt, now() - started);
        if (delay === null) {
          throw new UserError(
            'GEX_API_UNREACHABLE',
            `${request.method} ${request.url} failed: ${error.message.trim()}` +
              `${curl ? ` (curl error ${curl})` : ''}${attempt > 1 ? ` after ${attempt} attempts` : ''}${unfixable ? `. Not retried: ${unfixable}` : ''}`,
            { cause: error },
          );
        }
        retryReason = `${describeNetworkError(error)}${curl ? `, curl error ${curl}` : ''}`;
        retryFields = { errorCode: error.code ?? 'unknown' };
      }
      this.logRetry(
        logger,
        request,
        { attempt, delay, reason: retryReason, fields: retryFields, firstContact },
        retries,
      );
      this.stats.retries++;
      this.stats.waitedMs += delay.ms;
      retries.waitedMs += delay.ms;
      await this.waitOrCancel(wait, delay.ms, request, signal);
    }
  }

  /**
   * A connection to a host that has not answered once in this run kept failing for
   * FIRST_CONTACT_MS: the run fails now, naming the host and port, rather than after GE's ~17
   * minutes of retries (reached-hosts.ts).
   */
  private neverAnswered(request: HttpRequest, error: RequestError, attempts: number, elapsedMs: number): UserError {
    const curl = curlCodeOf(error);
    const { retry } = this.options;
    const max = retry.settings.maxRetries;
    const geWaits = formatDuration(retry.waitsAhead(1, retry.settings.backoffBaseMs));
    return new UserError(
      'GEX_API_UNREACHABLE',
      `Cannot connect to ${ReachedHosts.hostOf(request.url)} (${request.method} ${request.url}): ` +
        `${describeNetworkError(error)}${curl ? `, curl error ${curl}` : ''}, on ${attempts} attempt${attempts === 1 ? '' : 's'} in ${formatDuration(elapsedMs)}. ` +
        `The host has not answered once in this run: gex retries such a host for at most ${FIRST_CONTACT_MS / 1000} s ` +
        `(Generic Extractor up to ${max} times, over ${geWaits}). Check the host and port of parameters.api.baseUrl, and that the API is running.`,
      { cause: error },
    );
  }

  /**
   * One line per retry saying why and when. A retry to connect to a host that has not answered yet
   * says, the first time, when gex gives up on it; once a request's retries pile up (OUTLOOK_AFTER_MS
   * of waiting), one line also says when its last retry would be if it keeps failing, so that an
   * unreachable API is not a silent quarter of an hour — and a single short wait is not an alarm.
   */
  private logRetry(
    logger: Logger,
    request: HttpRequest,
    retryOf: {
      attempt: number;
      delay: RetryDelay;
      reason: string;
      fields: { status: number } | { errorCode: string };
      firstContact: boolean;
    },
    retries: { waitedMs: number; outlookGiven: boolean },
  ): void {
    const { retry } = this.options;
    const { attempt, delay, reason, fields, firstContact } = retryOf;
    const max = retry.settings.maxRetries;
    const header = delay.source === 'header' ? ` (${retry.settings.retryHeader})` : '';
    const now = (this.options.now ?? Date.now)();
    let outlook = '';
    let lastRetryAt: string | undefined;
    if (firstContact) {
      if (attempt === 1)
        outlook = `. The host has not answered in this run: if it does not within ${FIRST_CONTACT_MS / 1000} s of the first attempt, the run fails`;
    } else if (!retries.outlookGiven && max > attempt && retries.waitedMs + delay.ms >= OUTLOOK_AFTER_MS) {
      retries.outlookGiven = true;
      const ahead = retry.waitsAhead(attempt, delay.ms);
      lastRetryAt = new Date(now + ahead).toISOString();
      outlook =
        `. If it keeps failing, the last retry (${max}) is at ${formatClockTime(now + ahead, now)} at the earliest ` +
        `(${formatDuration(ahead)} of waiting from now), then the run fails`;
    }
    logger.warn(
      {
        method: request.method,
        url: request.url,
        ...fields,
        attempt,
        maxRetries: max,
        retryInMs: delay.ms,
        ...(lastRetryAt ? { lastRetryAt } : {}),
      },
      `${request.method} ${request.url}: ${reason}; retry ${attempt} of ${max} in ${(delay.ms / 1000).toFixed(1)} s${header}${outlook}`,
    );
  }

  private async waitOrCancel(
    wait: (ms: number) => Promise<void>,
    ms: number,
    request: HttpRequest,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    if (ms <= 0) return;
    try {
      await wait(ms);
    } catch (error) {
      if (signal?.aborted) throw new RequestCancelled(`${request.method} ${request.url} was cancelled`);
      throw error;
    }
  }

  /**
   * Pauses every later request when the API says its window is used up (RateLimit headers). A
   * pause longer than the retry ceiling is not taken on trust: requests go on, and a 429 that
   * follows meets the retry policy and its ceiling.
   */
  private notePause(headers: IncomingHttpHeaders, logger: Logger): void {
    const ms = rateLimitPauseMs(headers, (this.options.now ?? Date.now)());
    if (ms === null || ms > this.options.retry.settings.maxRetryWaitMs) return;
    if (this.rateLimiter.pauseLeft() < ms)
      logger.debug(`The API's rate limit is used up: next request in ${(ms / 1000).toFixed(1)} s`);
    this.rateLimiter.pauseFor(ms);
  }

  /**
   * One attempt: the response streamed and counted after decompression, so that a body over the
   * limit (a gzip bomb, an endless stream) is cut off instead of filling memory.
   */
  private exchange(sent: HttpRequest, request: HttpRequest, runSignal: AbortSignal | undefined): Promise<Exchange> {
    const { signal, release } = requestSignal(runSignal);
    const stream = this.got.stream(sent.url, {
      method: sent.method,
      headers: wireHeaders(sent.headers),
      body: wireBody(sent.body),
      signal,
      request: exactTargetRequest(sent.url),
    });
    let response: PlainResponse | undefined;
    stream.once('response', (received: PlainResponse) => (response = received));
    const limit = this.maxResponseBytes;
    return readLimited(stream, limit, () => new ResponseTooLarge(`${request.method} ${request.url}`, limit))
      .catch((error: unknown) => {
        throw asRequestError(error, stream);
      })
      .then((body) => ({
        statusCode: response!.statusCode,
        statusMessage: response!.statusMessage,
        headers: response!.headers,
        body,
      }))
      .finally(release);
  }

  /**
   * GE signs every hop of a redirect again (its signing middleware runs below the redirect one):
   * the hop is signed over its own target and method. A hop to another origin carries no
   * credentials (see redirectRules), so it stays unsigned.
   */
  private async signRedirect(...[next, response]: Parameters<BeforeRedirectHook>): Promise<void> {
    const { signer } = this.options;
    const to = next.url instanceof URL ? next.url : null;
    if (!signer || !to || new URL(response.url).origin !== to.origin) return;
    // header values are on their way to the wire as one character per byte (wireHeaders): back to
    // text. Accept-Encoding is got's own (added again after this hook), not a header gex signs.
    const headers = Object.entries(next.headers).flatMap(([name, value]): Array<[string, string]> =>
      typeof value === 'string' && name !== 'accept-encoding'
        ? [[name, Buffer.from(value, 'latin1').toString('utf8')]]
        : [],
    );
    const signed = await signer.sign({
      method: next.method === 'POST' ? 'POST' : 'GET',
      url: `${to.origin}${to.pathname}${to.search}`,
      headers,
      // the body went out as bytes (wireBody); it is signed as the text it is
      body:
        typeof next.body === 'string' ? next.body : Buffer.isBuffer(next.body) ? next.body.toString('utf8') : undefined,
    });
    next.url = new URL(signed.url);
    next.headers = wireHeaders(signed.headers);
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}
