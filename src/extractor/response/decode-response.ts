import { UserError } from '../../common/errors.js';
import { decodeJson, JsonSyntaxError, JsonUnpairedSurrogateError, type JsonValue } from '../../json/index.js';
import type { HttpResponse } from '../http/types.js';
import type { HttpRequest } from '../http/types.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

const SNIPPET_LENGTH = 300;

/**
 * The start of a body for an error message. Secrets are hidden before it is cut, so a secret the
 * API echoed across the cut leaves no visible part.
 */
export function bodySnippet(
  body: Buffer,
  redact: (text: string) => string = (text) => text,
  length = SNIPPET_LENGTH,
): string {
  // a little more than needed: a secret crossing the cut is still seen whole
  const text = redact(body.toString('utf8', 0, Math.min(body.length, length * 4)))
    .replace(/\s+/g, ' ')
    .trim();
  let end = Math.min(text.length, length);
  const marker = text.lastIndexOf('[hidden]', end - 1);
  if (marker >= 0 && marker + 8 > end) end = marker + 8;
  const cut = text.slice(0, end);
  return cut === '' ? '' : `: ${cut}${body.length > length * 4 || text.length > end ? '…' : ''}`;
}

/**
 * The decoded body of a response. A status ≥ 400 fails the run with the URL and status, unless
 * listed in `ignoreErrors` — then the body is data, and a body that is not JSON becomes
 * `{"errorData": "<body>"}` (GE).
 */
export function decodeResponse(
  response: HttpResponse,
  request: HttpRequest,
  ignoreErrors: number[],
  redact?: (text: string) => string,
): JsonValue {
  const ignored = ignoreErrors.includes(response.status);
  const failed = () =>
    new UserError(
      'GEX_API_REQUEST_FAILED',
      `The API request failed: [${response.status}] ${response.statusMessage} (${request.method} ${request.url})${bodySnippet(response.body, redact)}`,
    );
  if (response.status >= 400 && !ignored) throw failed();
  const value = decodeBody(response, request, ignored);
  // GE takes an ignored error's body as data only when it decodes to something: `null` fails the run
  if (response.status >= 400 && value === null) throw failed();
  return value;
}

function decodeBody(response: HttpResponse, request: HttpRequest, ignored: boolean): JsonValue {
  const invalid = (reason: string): JsonValue => {
    if (ignored) return new Map([['errorData', response.body.toString('utf8')]]);
    throw new UserError(
      'GEX_API_RESPONSE_INVALID',
      `Invalid JSON response from API: ${reason} (${request.method} ${request.url}, status ${response.status})`,
    );
  };
  // only a malformed body is the API's fault; anything else failing here is gex's and must not be
  // reported as bad UTF-8 or bad JSON
  let text: string;
  try {
    text = utf8.decode(response.body);
  } catch (error) {
    if (!isInvalidUtf8(error)) throw error;
    return invalid('the body is not valid UTF-8');
  }
  try {
    return decodeJson(text);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    if (!(error instanceof JsonUnpairedSurrogateError)) return invalid(error.message);
  }
  // GE's recovery from an unpaired surrogate: every \uXXXX escape of the body is dropped (not only
  // the broken one) and the body decoded again
  try {
    return decodeJson(text.replace(/\\u[0-9a-fA-F]{4}/g, ''));
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    return invalid(`unpaired UTF-16 surrogate; with \\u escapes removed: ${error.message}`);
  }
}

function isInvalidUtf8(error: unknown): boolean {
  return error instanceof TypeError && (error as NodeJS.ErrnoException).code === 'ERR_ENCODING_INVALID_ENCODED_DATA';
}
