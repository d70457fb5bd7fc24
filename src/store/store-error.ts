import type { UserErrorCode } from '../common/error-catalogue.js';
import { UserError } from '../common/errors.js';
import { KEBOOLA_ERRORS, type KeboolaAnswer } from '../common/keboola-errors.js';

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

  /** A refusal with one of Keboola's codes, at the status its entry of KEBOOLA_ERRORS gives. */
  static keboola(
    error: KeboolaAnswer,
    message: string,
    details?: Array<{ key: string; message: string }>,
    gexCode?: UserErrorCode,
  ): StoreError {
    return new StoreError(error.status, error.code, message, details, gexCode);
  }

  static notFound(message: string): StoreError {
    return StoreError.keboola(KEBOOLA_ERRORS.notFound, message);
  }

  static validation(message: string, code: string = KEBOOLA_ERRORS.componentsValidation.code): StoreError {
    return new StoreError(400, code, message);
  }

  static accessDenied(message: string = KEBOOLA_ERRORS.accessDenied.message): StoreError {
    return StoreError.keboola(KEBOOLA_ERRORS.accessDenied, message);
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
