import type { FastifyInstance, FastifyRequest } from 'fastify';
import qs from 'qs';
import { decodeJson, fromPlain, JsonSyntaxError, type JsonValue } from '../php-compat/index.js';
import { StoreError } from '../store/store-error.js';

/**
 * Request body parsers (storage-api.md §1.2). Clients send JSON (current PHP client, Python) or
 * form bodies (older PHP client, Go client, curl examples); both become gex's lossless value model
 * so the routes read one shape. An empty body is "no fields".
 */

/** JSON through gex's decoder: key order, `[]` vs `{}`, `1.0` and int64 survive exactly. */
export function parseJsonBody(text: string): JsonValue | undefined {
  if (text.trim() === '') return undefined;
  try {
    return decodeJson(text);
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    throw new StoreError(
      400,
      'validation.invalidJson',
      `The request body is not valid JSON (${e.message}). Send a JSON object such as {"name":"My configuration"} with Content-Type: application/json.`,
    );
  }
}

/**
 * Form bodies with PHP's bracket keys (`rowsSortOrder[0]=a`, `metadata[0][key]=k`), as the Go
 * client and PHP's http_build_query write them. Values stay strings; `configuration` and `state`
 * hold JSON text that the input layer decodes.
 */
export function parseFormBody(text: string): JsonValue | undefined {
  if (text.trim() === '') return undefined;
  // generous limits: qs turns indexes above arrayLimit into object keys and drops parameters beyond parameterLimit
  return fromPlain(qs.parse(text, { arrayLimit: 100_000, parameterLimit: 1_000_000, depth: 5 }));
}

/** Without a Content-Type the body is taken for JSON when it looks like JSON, else for a form. */
function parseUntypedBody(request: FastifyRequest, text: string): JsonValue | undefined {
  const contentType = request.headers['content-type'];
  if (contentType !== undefined) {
    throw new StoreError(
      415,
      'storage.unsupportedMediaType',
      `Unsupported Content-Type "${contentType}". Send application/json or application/x-www-form-urlencoded.`,
    );
  }
  return /^\s*[[{]/.test(text) ? parseJsonBody(text) : parseFormBody(text);
}

export function registerBodyParsers(app: FastifyInstance): void {
  // fastify's own text/plain parser would hand routes a bare string: refuse it like any other type
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, async (_request: FastifyRequest, body: string) => parseJsonBody(body));
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, async (_request: FastifyRequest, body: string) => parseFormBody(body));
  app.addContentTypeParser('*', { parseAs: 'string' }, async (request: FastifyRequest, body: string) => parseUntypedBody(request, body));
}
