import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode } from '../../common/error-catalogue.js';
import { excerpt } from '../../common/log-text.js';
import { holdsUrlSignature, maskUrlSignatures } from '../../common/url-signature.js';
import { describeBytes } from '../../common/text.js';
import type { JsonObject, JsonValue } from '../../json/index.js';
import { MAX_ADDRESSABLE_ID_LENGTH } from '../../store/addressable-id.js';
import { StoreError } from '../../store/store-error.js';
import { tokenOf } from '../auth.js';
import { sendJson } from '../http/reply.js';
import { loggableUrl } from '../operations/request-log.js';
import { unimplementedFeature } from './unimplemented.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/**
 * Every failure leaves the server as Keboola's error body:
 * `{"error", "code", "status": "error", "exceptionId", "gexCode"[, "errors"]}` (docs/storage-api.md#errors).
 * Store rules throw StoreError (status + code); the HTTP layer uses the same class for its own
 * refusals (tokens, request bodies, routes), so there is one way to fail. `code` is Keboola's
 * (its clients match on it); gex's catalogue code goes beside it as `gexCode` (docs/errors.md).
 */

export function newExceptionId(): string {
  return `exception-${randomBytes(16).toString('hex')}`;
}

/** The StoreError a failure is answered with; anything unexpected becomes a 500. */
export function toStoreError(error: unknown, bodyLimit: number): StoreError {
  if (error instanceof StoreError) return error;
  const fastifyError = error as Partial<FastifyError>;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return StoreError.keboola(
        KEBOOLA_ERRORS.requestTooLarge,
        `The request body is larger than the server's limit of ${describeBytes(bodyLimit)}. ` +
          'Send a smaller body (a configuration or state may be at most 4 MB).',
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return StoreError.keboola(
        KEBOOLA_ERRORS.unsupportedMediaType,
        'The Content-Type header is not valid. Send application/json or application/x-www-form-urlencoded.',
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return StoreError.keboola(
        KEBOOLA_ERRORS.invalidRequest,
        'The request body length does not match its Content-Length header.',
      );
    case 'FST_ERR_BAD_URL':
      return StoreError.keboola(
        KEBOOLA_ERRORS.invalidRequest,
        'The URL path is not validly percent-encoded (such as %zz). Encode each path segment with encodeURIComponent.',
      );
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return StoreError.keboola(
        KEBOOLA_ERRORS.uriTooLong,
        `A segment of the URL path is longer than ${MAX_ADDRESSABLE_ID_LENGTH} characters: no id that long can exist (ids are at most ${MAX_ADDRESSABLE_ID_LENGTH} characters URL-encoded).`,
      );
    default:
      break; // any other error: by its status below
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new StoreError(status, KEBOOLA_ERRORS.invalidRequest.code, fastifyError.message ?? 'Invalid request');
  }
  return StoreError.keboola(
    KEBOOLA_ERRORS.internalError,
    'Internal server error. The server log has the details under this exceptionId.',
  );
}

/** The catalogue code an answer carries: a 500 is always gex's own fault, whatever failed. */
export function answerCode(error: StoreError): ErrorCode {
  return error.status === 500 ? 'GEX_INTERNAL' : error.gexCode;
}

/**
 * Whose error body an answer carries: the Storage API's (`code` a string such as
 * `storage.tables.notFound`), or the Job Queue and Scheduler APIs' (Keboola's api-error-control:
 * `code` the HTTP status as a number — Keboola's Go SDK decodes it into an int — and the string
 * code in `context.errorCode`, which Keboola's PHP Queue client reads).
 */
export type ErrorShape = 'storage' | 'service';

/**
 * The longest message an error answer carries. Messages quote what a client sent as excerpts
 * (excerptId); this bounds the answer whatever a message quotes.
 */
const MAX_MESSAGE_CHARACTERS = 2000;
const MAX_DETAILS = 20;

/** An error's details as the answer lists them: the first MAX_DETAILS, each bounded. */
function detailsOf(error: StoreError): JsonObject[] | undefined {
  // a body with thousands of bad fields is not listed back field by field
  return error.details?.slice(0, MAX_DETAILS).map(
    (d): JsonObject =>
      new Map([
        ['key', excerpt(d.key, MAX_MESSAGE_CHARACTERS)],
        ['message', excerpt(d.message, MAX_MESSAGE_CHARACTERS)],
      ]),
  );
}

export function sendError(
  reply: FastifyReply,
  error: StoreError,
  exceptionId = newExceptionId(),
  shape: ErrorShape = 'storage',
): FastifyReply {
  if (shape === 'service') return sendJson(reply, error.status, serviceErrorBody(error, exceptionId));
  const body: JsonObject = new Map([
    ['error', excerpt(maskUrlSignatures(error.message), MAX_MESSAGE_CHARACTERS)],
    ['code', error.code],
    ['status', 'error'],
    ['exceptionId', exceptionId],
    ['gexCode', answerCode(error)],
  ]);
  const details = detailsOf(error);
  if (details) body.set('errors', details);
  return sendJson(reply, error.status, body);
}

/** `{error, code: <status>, exceptionId, status: "error", context: {errorCode[, errors]}, gexCode}`. */
function serviceErrorBody(error: StoreError, exceptionId: string): JsonObject {
  const context: JsonObject = new Map();
  if (error.code) context.set('errorCode', error.code);
  const details = detailsOf(error);
  if (details) context.set('errors', details);
  return new Map<string, JsonValue>([
    ['error', excerpt(maskUrlSignatures(error.message), MAX_MESSAGE_CHARACTERS)],
    ['code', error.status],
    ['exceptionId', exceptionId],
    ['status', 'error'],
    // PHP's empty context is an empty list
    ['context', context.size === 0 ? [] : context],
    ['gexCode', answerCode(error)],
  ]);
}

/** How long a client should wait before retrying a 503 (the database unavailable). */
const RETRY_AFTER_SECONDS = 5;

/** fastify's error handler: maps, logs server faults with their exceptionId, answers in `shape`. */
export function errorHandler(bodyLimit: number, shape: ErrorShape = 'storage') {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const mapped = toStoreError(error, bodyLimit);
    const exceptionId = newExceptionId();
    const url = loggableUrl(request.url, tokenOf(request));
    if (mapped.status === 503) {
      // the database is down or saturated: one line per request, no stack; clients retry later
      request.log.warn(
        { code: answerCode(mapped) },
        `${request.method} ${url} → 503 (${exceptionId}): ${excerpt(mapped.message, MAX_MESSAGE_CHARACTERS)}`,
      );
      void reply.header('Retry-After', String(RETRY_AFTER_SECONDS));
    } else if (mapped.status >= 500)
      request.log.error(
        { err: error, exceptionId, code: answerCode(mapped) },
        `${request.method} ${url} failed (${exceptionId}): ${(error as Error).message}`,
      );
    else
      request.log.debug(
        { code: answerCode(mapped) },
        `${request.method} ${url} → ${mapped.status} ${mapped.code}: ${excerpt(mapped.message, MAX_MESSAGE_CHARACTERS)}`,
      );
    return sendError(reply, mapped, exceptionId, shape);
  };
}

function safeDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The longest part of a request path an error repeats. */
const SHOWN_PATH_CHARACTERS = 200;

/**
 * Requests no route matched: a Keboola route gex does not implement is 501 `notImplemented`
 * saying what is missing (unimplemented.ts); anything else is 404. Both are answered before any
 * token check: they reveal nothing of a project.
 */
export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0];
  // a pre-signed address's signing parameter pasted into the path is not repeated back
  const said = holdsUrlSignature(path) || holdsUrlSignature(safeDecoded(path)) ? '[a path holding a signature]' : path;
  // request.url is percent-encoded: no control characters; only its length needs a bound
  const shown = `${request.method} ${said.length > SHOWN_PATH_CHARACTERS ? `${said.slice(0, SHOWN_PATH_CHARACTERS)}…` : said}`;
  const feature = unimplementedFeature(path);
  if (feature !== null) {
    return sendError(
      reply,
      StoreError.keboola(
        KEBOOLA_ERRORS.notImplemented,
        `Not implemented in gex: ${feature} (${shown}). gex serves component configurations, Storage buckets and tables (list, detail, data-preview, delete), tokens and finished jobs.`,
      ),
    );
  }
  // under the Job Queue and Scheduler APIs' paths: their error shape (their clients decode it)
  if (SERVICE_PATH.test(path))
    return sendError(
      reply,
      StoreError.notFound(
        `Unknown route: ${shown}. The Job Queue API serves /jobs, /jobs/{id}, /jobs/{id}/kill and /search/jobs; the Scheduler API /schedules and /configurations/{id}.`,
      ),
      undefined,
      'service',
    );
  return sendError(
    reply,
    StoreError.notFound(
      `Unknown route: ${shown}. Configurations live under /v2/storage/branch/default/components/… (or the deprecated /v2/storage/components/…), tables under /v2/storage/tables/….`,
    ),
  );
}

/** Paths of the Job Queue and Scheduler APIs at the server's origin. */
const SERVICE_PATH = /^\/(jobs|search|schedules|configurations)(\/|$)/;

/**
 * Errors fastify raises before a route is found (bad URL encoding, a path parameter over the
 * router's limit): answered like every other error.
 */
export function frameworkErrorHandler(bodyLimit: number) {
  const handle = errorHandler(bodyLimit);
  return (error: unknown, request: FastifyRequest, reply: FastifyReply): void => {
    handle(error, request, reply);
  };
}

/** What node's HTTP parser could not read (before fastify sees a request): status, code, message. */
function clientErrorOf(error: NodeJS.ErrnoException): StoreError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return StoreError.keboola(
        KEBOOLA_ERRORS.requestTimeout,
        'The request was not received in time (was its Content-Length larger than the body sent?). Send the whole request at once.',
      );
    case 'HPE_HEADER_OVERFLOW':
      return StoreError.keboola(
        KEBOOLA_ERRORS.headersTooLarge,
        'The request headers are too large. Send fewer or shorter headers.',
      );
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return StoreError.keboola(
        KEBOOLA_ERRORS.invalidRequest,
        'The Content-Length header is not valid (not a number, given twice, or together with Transfer-Encoding).',
      );
    default:
      return StoreError.keboola(
        KEBOOLA_ERRORS.invalidRequest,
        `The request is not valid HTTP (${error.code ?? 'unreadable'}).`,
      );
  }
}

/**
 * Answers a request node's HTTP parser refused (malformed, headers too large, too slow) with
 * Keboola's error body, then closes the connection: what follows on it cannot be trusted.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const mapped = clientErrorOf(error);
  if (socket.writable) {
    const body = JSON.stringify({
      error: mapped.message,
      code: mapped.code,
      status: 'error',
      exceptionId: newExceptionId(),
      gexCode: answerCode(mapped),
    });
    socket.write(
      `HTTP/1.1 ${mapped.status} ${STATUS_CODES[mapped.status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
