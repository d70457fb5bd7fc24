import type { FastifyInstance, FastifyRequest } from 'fastify';
import { excerptQuoted } from '../../common/log-text.js';
import { decodeJson, fromPlain, JsonSyntaxError, type JsonValue } from '../../json/index.js';
import { StoreError } from '../../store/store-error.js';
import { parseFormAsync } from './form-parser.js';
import { FormLimitExceeded, InvalidUtf8, strictUtf8 } from './form-text.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/**
 * Request body parsers (docs/storage-api.md#request-bodies). Clients send JSON (current PHP client, Python) or
 * form bodies (older PHP client, Go client, curl examples); both become gex's lossless value model
 * so the routes read one shape. An empty body is "no fields".
 */

function invalidEncoding(error: InvalidUtf8): StoreError {
  return StoreError.keboola(KEBOOLA_ERRORS.invalidEncoding, error.message);
}

/** The body's bytes as text; invalid UTF-8 is refused, never replaced by U+FFFD. */
export function bodyText(bytes: Buffer): string {
  try {
    return strictUtf8(bytes);
  } catch (e) {
    throw e instanceof InvalidUtf8 ? invalidEncoding(e) : e;
  }
}

/** JSON through gex's decoder: key order, `[]` vs `{}`, `1.0` and int64 survive exactly. */
export function parseJsonBody(text: string): JsonValue | undefined {
  if (text.trim() === '') return undefined;
  try {
    return decodeJson(text);
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    throw StoreError.keboola(
      KEBOOLA_ERRORS.invalidJson,
      `The request body is not valid JSON (${e.message}). Send a JSON object such as {"name":"My configuration"} with Content-Type: application/json.`,
    );
  }
}

/**
 * Form bodies with PHP's bracket keys (`rowsSortOrder[0]=a`, `metadata[0][key]=k`), as the Go
 * client and PHP's http_build_query write them. Values stay strings; `configuration` and `state`
 * hold JSON text that the input layer decodes. Parsed off the main thread, within FORM_LIMITS.
 */
export async function parseFormBody(bytes: Buffer): Promise<JsonValue | undefined> {
  try {
    const parsed = await parseFormAsync(bytes);
    return parsed === undefined ? undefined : fromPlain(parsed);
  } catch (e) {
    if (e instanceof FormLimitExceeded) throw StoreError.keboola(KEBOOLA_ERRORS.invalidForm, e.message);
    if (e instanceof InvalidUtf8) throw invalidEncoding(e);
    throw e;
  }
}

/** Whether the first byte that is not JSON whitespace opens an object or a list. */
function looksLikeJson(bytes: Buffer): boolean {
  for (const byte of bytes) {
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d) continue;
    return byte === 0x7b || byte === 0x5b;
  }
  return false;
}

/** Without a Content-Type the body is taken for JSON when it looks like JSON, else for a form. */
async function parseUntypedBody(request: FastifyRequest, bytes: Buffer): Promise<JsonValue | undefined> {
  const contentType = request.headers['content-type'];
  if (contentType !== undefined) {
    throw StoreError.keboola(
      KEBOOLA_ERRORS.unsupportedMediaType,
      `Unsupported Content-Type ${excerptQuoted(contentType)}. Send application/json or application/x-www-form-urlencoded.`,
    );
  }
  return looksLikeJson(bytes) ? parseJsonBody(bodyText(bytes)) : parseFormBody(bytes);
}

export function registerBodyParsers(app: FastifyInstance): void {
  // fastify's own text/plain parser would hand routes a bare string: refuse it like any other type
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, async (_request: FastifyRequest, body: Buffer) =>
    parseJsonBody(bodyText(body)),
  );
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'buffer' },
    async (_request: FastifyRequest, body: Buffer) => parseFormBody(body),
  );
  app.addContentTypeParser('*', { parseAs: 'buffer' }, async (request: FastifyRequest, body: Buffer) =>
    parseUntypedBody(request, body),
  );
}
