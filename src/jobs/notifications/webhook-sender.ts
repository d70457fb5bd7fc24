import { createHmac } from 'node:crypto';
import got, { type Response } from 'got';
import { excerpt } from '../../common/log-text.js';
import type { AttemptOutcome } from './notification-payload.js';

/** names one event: the same on every attempt, so a receiver drops repeats */
export const DELIVERY_ID_HEADER = 'x-gex-delivery-id';
/** `sha256=` and the hex HMAC-SHA256 of the body under the subscription's signing secret */
export const SIGNATURE_HEADER = 'x-gex-signature';
export const EVENT_HEADER = 'x-gex-event';
/** which attempt this is (1 for the first) */
export const ATTEMPT_HEADER = 'x-gex-attempt';

export const WEBHOOK_TIMEOUT_MS = 10_000;
/** what is read of a receiver's answer (for the record), and for how long, before the connection is cut */
const ANSWER_BYTES = 512;
const ANSWER_MS = 1000;

/** The signature header's value for `body` under `secret`. */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** A receiver's answer retried: a server error, a timeout of its own, too many requests. */
function retriable(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/** Reads at most ANSWER_BYTES of an answer within ANSWER_MS (an endless or stalled body is cut). */
async function answerExcerpt(stream: NodeJS.ReadableStream & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ANSWER_MS);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    stream.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= ANSWER_BYTES) done();
    });
    stream.once('end', done);
    stream.once('error', done);
  });
  stream.destroy();
  return Buffer.concat(chunks).subarray(0, ANSWER_BYTES).toString('utf8');
}

export interface WebhookRequest {
  url: string;
  signingSecret: string;
  body: string;
  deliveryId: string;
  event: string;
  attempt: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * POSTs one event to a webhook: the JSON body, its signature, the delivery id; no redirect is
 * followed, the whole request is bounded by its timeout and the answer's body is cut after a few
 * hundred bytes. 2xx: delivered; 5xx, 408, 429, a timeout or a connection error: retry; any other
 * answer (3xx, 4xx): final. The message names only the receiver's origin (its path and query
 * may hold secrets).
 */
export async function sendWebhook(request: WebhookRequest): Promise<AttemptOutcome> {
  const origin = new URL(request.url).origin;
  const stream = got.stream.post(request.url, {
    body: request.body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'gex-notifications',
      [DELIVERY_ID_HEADER]: request.deliveryId,
      [SIGNATURE_HEADER]: webhookSignature(request.signingSecret, request.body),
      [EVENT_HEADER]: request.event,
      [ATTEMPT_HEADER]: String(request.attempt),
    },
    timeout: { request: request.timeoutMs ?? WEBHOOK_TIMEOUT_MS },
    followRedirect: false,
    retry: { limit: 0 },
    throwHttpErrors: false,
    signal: request.signal,
  });
  let response: Response;
  try {
    response = await new Promise<Response>((resolve, reject) => {
      stream.once('response', resolve);
      stream.once('error', reject);
    });
  } catch (error) {
    stream.destroy();
    const e = error as Error & { code?: string };
    const what = e.name === 'TimeoutError' ? 'no answer in time' : (e.code ?? e.name);
    return { outcome: 'retry', statusCode: null, message: `${origin}: ${what}: ${excerpt(e.message, 200)}` };
  }
  const status = response.statusCode;
  const answer = await answerExcerpt(stream);
  const said = answer.trim() === '' ? '' : `: ${excerpt(answer.replace(/\s+/g, ' ').trim(), 200)}`;
  if (status >= 200 && status < 300)
    return { outcome: 'delivered', statusCode: status, message: `${origin}: HTTP ${status}` };
  if (status >= 300 && status < 400)
    return {
      outcome: 'final',
      statusCode: status,
      message: `${origin}: HTTP ${status}, a redirect, not followed: point the subscription at the final URL`,
    };
  return {
    outcome: retriable(status) ? 'retry' : 'final',
    statusCode: status,
    message: `${origin}: HTTP ${status}${said}`,
  };
}
