import { UserError } from '../common/errors.js';

/**
 * A failure of a store operation with the HTTP status and Keboola error code it maps to
 * (docs/storage-api.md#errors). It is a user error for the CLI and the runner (exit 1) unless it is a 5xx.
 */
export class StoreError extends UserError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Array<{ key: string; message: string }>,
  ) {
    super(message);
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
