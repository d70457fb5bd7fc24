import { UserError } from '../../common/errors.js';
import { decodeJson, JsonSyntaxError, type JsonValue } from '../../php-compat/index.js';
import type { HttpResponse } from '../http/http-client.js';
import type { HttpRequest } from '../http/request-builder.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

function snippet(body: Buffer): string {
  const text = body.toString('utf8', 0, Math.min(body.length, 300)).replace(/\s+/g, ' ').trim();
  return text === '' ? '' : `: ${text}${body.length > 300 ? '…' : ''}`;
}

/**
 * The decoded body of a response. A status ≥ 400 fails the run with the URL and status, unless
 * listed in `ignoreErrors` — then the body is data, and a body that is not JSON becomes
 * `{"errorData": "<body>"}` (GE).
 */
export function decodeResponse(response: HttpResponse, request: HttpRequest, ignoreErrors: number[]): JsonValue {
  const ignored = ignoreErrors.includes(response.status);
  if (response.status >= 400 && !ignored) {
    throw new UserError(
      `The API request failed: [${response.status}] ${response.statusMessage} (${request.method} ${request.url})${snippet(response.body)}`,
    );
  }
  const invalid = (reason: string): JsonValue => {
    if (ignored) return new Map([['errorData', response.body.toString('utf8')]]);
    throw new UserError(`Invalid JSON response from API: ${reason} (${request.method} ${request.url}, status ${response.status})`);
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
    return invalid(error.message);
  }
}

function isInvalidUtf8(error: unknown): boolean {
  return error instanceof TypeError && (error as NodeJS.ErrnoException).code === 'ERR_ENCODING_INVALID_ENCODED_DATA';
}
