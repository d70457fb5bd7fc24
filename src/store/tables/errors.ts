import { UserError } from '../../common/errors.js';

/**
 * Refusals of table operations that callers tell apart: the HTTP API answers them with Keboola's
 * status and code (404 for what does not exist in the project, 400 for a conflict), the CLI prints
 * the message. Their messages name the id (made safe for display) and what to do.
 */

export class TableNotFound extends UserError {
  readonly kind = 'tableNotFound';
  constructor(message: string) {
    super('GEX_TABLE_NOT_FOUND', message);
  }
}

export class BucketNotFound extends UserError {
  readonly kind = 'bucketNotFound';
  constructor(message: string) {
    super('GEX_BUCKET_NOT_FOUND', message);
  }
}

export class BucketExists extends UserError {
  readonly kind = 'bucketExists';
  constructor(message: string) {
    super('GEX_BUCKET_EXISTS', message);
  }
}

export class BucketNotEmpty extends UserError {
  readonly kind = 'bucketNotEmpty';
  constructor(message: string) {
    super('GEX_BUCKET_NOT_EMPTY', message);
  }
}

export class ColumnNotFound extends UserError {
  readonly kind = 'columnNotFound';
  constructor(message: string) {
    super('GEX_COLUMN_NOT_FOUND', message);
  }
}

export class MetadataNotFound extends UserError {
  readonly kind = 'metadataNotFound';
  constructor(message: string) {
    super('GEX_METADATA_NOT_FOUND', message);
  }
}
