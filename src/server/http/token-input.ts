import { isJsonObject, isScalar, type JsonObject, type JsonValue } from '../../json/index.js';
import { phpToString } from '../../php/index.js';
import { MAX_TOKEN_DESCRIPTION_LENGTH } from '../../store/embedded/tokens.js';
import { StoreError } from '../../store/store-error.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/**
 * The body of `POST /v2/storage/tokens` (JSON or form) as gex can honour it
 * (docs/storage-api.md#token-management): gex tokens are read-write or read-only for the whole
 * project, never expire and are never made master over HTTP. What a client asks for that gex
 * cannot give is refused, not silently widened or dropped.
 */

const CODE = KEBOOLA_ERRORS.tokensValidation.code;

function invalid(key: string, problem: string): StoreError {
  return new StoreError(400, CODE, `Invalid parameters - ${key}: ${problem}`, [{ key, message: problem }]);
}

function bodyObject(body: unknown): JsonObject {
  if (body === undefined || body === null) return new Map();
  if (isJsonObject(body)) return body;
  if (Array.isArray(body) && body.length === 0) return new Map();
  throw new StoreError(
    400,
    CODE,
    'The request body must be a JSON object (or a form) of named fields, e.g. {"description":"ci","canManageBuckets":true}.',
  );
}

function present(body: JsonObject, key: string): JsonValue | undefined {
  const value = body.get(key);
  return value === null ? undefined : value;
}

function flag(body: JsonObject, key: string): boolean {
  const value = present(body, key);
  if (value === undefined) return false;
  const normalised = typeof value === 'string' ? value.trim().toLowerCase() : value;
  if (normalised === true || normalised === 1 || normalised === '1' || normalised === 'true') return true;
  if (normalised === false || normalised === 0 || normalised === '0' || normalised === 'false' || normalised === '')
    return false;
  throw invalid(key, 'This value should be of type bool (true, false, 1 or 0).');
}

/** An absent or empty list or map: what gex can honour of per-bucket and per-component grants. */
function requireEmpty(body: JsonObject, key: string, instead: string): void {
  const value = present(body, key);
  if (value === undefined || value === '') return;
  if ((Array.isArray(value) && value.length === 0) || (isJsonObject(value) && value.size === 0)) return;
  throw invalid(
    key,
    `gex has no ${instead}: a token may read the whole project (canManageBuckets false) or read and change it (canManageBuckets true).`,
  );
}

export interface TokenCreateInput {
  description: string;
  readOnly: boolean;
}

export function tokenCreateInput(body: unknown): TokenCreateInput {
  const fields = bodyObject(body);
  const text = present(fields, 'description');
  if (text !== undefined && !isScalar(text)) throw invalid('description', 'This value should be of type string.');
  const description = text === undefined ? '' : phpToString(text);
  if (description.length > MAX_TOKEN_DESCRIPTION_LENGTH) {
    throw invalid(
      'description',
      `This value is too long: at most ${MAX_TOKEN_DESCRIPTION_LENGTH} characters, got ${description.length}.`,
    );
  }
  // PostgreSQL text cannot hold it; refused on every backend alike
  if (description.includes('\u0000')) throw invalid('description', 'This value contains a NUL character; remove it.');
  requireEmpty(fields, 'bucketPermissions', 'per-bucket permissions');
  requireEmpty(fields, 'componentAccess', 'per-component access');
  if (flag(fields, 'gexRunner'))
    throw invalid(
      'gexRunner',
      'a runner token receives secrets decrypted; only the operator of the store makes one ("gex tokens create --runner"), never a token over HTTP.',
    );
  const expiresIn = present(fields, 'expiresIn');
  if (expiresIn !== undefined && expiresIn !== '') {
    throw invalid(
      'expiresIn',
      'gex tokens do not expire. Delete the token (DELETE /v2/storage/tokens/{id}) when it is no longer needed.',
    );
  }
  // canManageTokens (deprecated in Keboola, ignored there too) and the file, trash, branch and job
  // flags have no counterpart: the answer shows what the token can do
  return { description, readOnly: !flag(fields, 'canManageBuckets') };
}
