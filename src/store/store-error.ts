import type { UserErrorCode } from '../common/error-catalogue.js';
import { UserError } from '../common/errors.js';

/**
 * A failure of a store operation with the HTTP status and Keboola error code it maps to
 * (docs/storage-api.md#errors). It is a user error for the CLI and the runner (exit 1) unless it is a 5xx.
 * `code` is Keboola's; gex's catalogue code (`gexCode`) follows the status unless one is given.
 */
export class StoreError extends UserError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Array<{ key: string; message: string }>,
    gexCode: UserErrorCode = storeErrorCode(status),
  ) {
    super(gexCode, message);
    this.name = 'StoreError';
  }

  static notFound(message: string): StoreError {
    return new StoreError(404, 'notFound', message);
  }

  static validation(message: string, code = 'storage.components.validation'): StoreError {
    return new StoreError(400, code, message);
  }

  static accessDenied(message = "You don't have access to the resource."): StoreError {
    return new StoreError(403, 'accessDenied', message);
  }
}

/** The catalogue code of a store's refusal with this HTTP status. */
export function storeErrorCode(status: number): UserErrorCode {
  if (status === 401) return 'GEX_STORE_TOKEN_INVALID';
  if (status === 403) return 'GEX_STORE_ACCESS_DENIED';
  if (status === 404) return 'GEX_STORE_NOT_FOUND';
  if (status === 501) return 'GEX_STORE_NOT_IMPLEMENTED';
  if (status >= 500) return 'GEX_STORE_UNAVAILABLE';
  return 'GEX_STORE_INVALID_REQUEST';
}
