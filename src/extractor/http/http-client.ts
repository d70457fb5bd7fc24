import http from 'node:http';
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { got, RequestError, type Got } from 'got';
import { UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import type { AuthMethod } from '../auth/auth-method.js';
import type { HttpRequest } from './request-builder.js';
import { curlCodeOf, type RetryPolicy } from './retry-policy.js';

export interface HttpResponse {
  status: number;
  statusMessage: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** attempts made, 1 = no retry */
  attempts: number;
}

export interface HttpClientOptions {
  retry: RetryPolicy;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  logger: Logger;
  /** replaced in tests to observe waits without waiting */
  sleep?: (ms: number) => Promise<void>;
  /** authentication applied to every attempt (GE's auth middleware sits inside the retry one) */
  auth?: AuthMethod | null;
  /** TLS: a CA replacing the trust store, and a client certificate (PEM with its key) */
  tls?: { caCertificate?: string; clientCertificate?: string };
}

export interface SendOptions {
  /** false for a login request: it goes through this client but bypasses the auth itself */
  authenticate?: boolean;
}

export interface HttpStats {
  requests: number;
  retries: number;
  waitedMs: number;
}

/**
 * Sends requests through got with keep-alive connections. Retries follow GE's policy (see
 * RetryPolicy) and are done here rather than by got, because GE retries statuses got never would
 * (e.g. a 202) and reads the retry header its own way. Returns the final response whatever its
 * status; the caller decides what a status means.
 */
export class HttpClient {
  private readonly got: Got;
  private readonly agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  readonly stats: HttpStats = { requests: 0, retries: 0, waitedMs: 0 };

  constructor(private readonly options: HttpClientOptions) {
    this.got = got.extend({
      throwHttpErrors: false,
      retry: { limit: 0 },
      followRedirect: true,
      maxRedirects: 5,
      responseType: 'buffer',
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
    const { retry, logger, auth } = this.options;
    const wait = this.options.sleep ?? ((ms: number) => sleep(ms));
    for (let attempt = 1; ; attempt++) {
      const sent = auth && sendOptions.authenticate !== false ? await auth.beforeRequest(request, this) : request;
      this.stats.requests++;
      let retryReason: string;
      let headerValue: string | undefined;
      try {
        const response = await this.got(sent.url, {
          method: sent.method,
          headers: Object.fromEntries(sent.headers),
          body: sent.body,
          responseType: 'buffer',
        });
        if (!retry.retriesStatus(response.statusCode) || !retry.canRetry(attempt - 1)) {
          return {
            status: response.statusCode,
            statusMessage: response.statusMessage ?? '',
            headers: response.headers,
            body: response.body,
            attempts: attempt,
          };
        }
        retryReason = `status ${response.statusCode}`;
        const raw = response.headers[retry.settings.retryHeader.toLowerCase()];
        headerValue = Array.isArray(raw) ? raw[0] : raw;
      } catch (error) {
        if (!(error instanceof RequestError)) throw error;
        const curl = curlCodeOf(error);
        if (!retry.retriesError(error) || !retry.canRetry(attempt - 1)) {
          throw new UserError(
            `${request.method} ${request.url} failed: ${error.message}` +
              `${curl ? ` (curl error ${curl})` : ''}${attempt > 1 ? ` after ${attempt} attempts` : ''}`,
            { cause: error },
          );
        }
        retryReason = `${error.code ?? error.message}`;
      }
      const delay = retry.delay(attempt, headerValue, request.url);
      logger.warn(
        `${request.method} ${request.url}: ${retryReason}; retry ${attempt} of ${retry.settings.maxRetries} in ` +
          `${(delay.ms / 1000).toFixed(1)} s${delay.source === 'header' ? ` (${retry.settings.retryHeader})` : ''}`,
      );
      this.stats.retries++;
      this.stats.waitedMs += delay.ms;
      await wait(delay.ms);
    }
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}
