import { UserError } from '../../common/errors.js';

/**
 * Refusals of table operations that callers tell apart: the HTTP API answers them with Keboola's
 * status and code (404 for what does not exist in the project, 400 for a conflict), the CLI prints
 * the message. Their messages name the id (made safe for display) and what to do.
 */

export class TableNotFound extends UserError {
  readonly kind = 'tableNotFound';
}

export class BucketNotFound extends UserError {
  readonly kind = 'bucketNotFound';
}

export class BucketExists extends UserError {
  readonly kind = 'bucketExists';
}

export class BucketNotEmpty extends UserError {
  readonly kind = 'bucketNotEmpty';
}
