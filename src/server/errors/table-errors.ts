import { UserError } from '../../common/errors.js';
import { StoreError } from '../../store/store-error.js';
import {
  BucketExists,
  BucketNotEmpty,
  BucketNotFound,
  checkBucketId,
  ColumnNotFound,
  MetadataInvalid,
  MetadataNotFound,
  parseTableId,
  TableNotFound,
} from '../../store/tables/index.js';
import type { Session } from '../auth.js';
import { KEBOOLA_ERRORS, metadataProblemCode } from '../../common/keboola-errors.js';

/**
 * The Storage tables' refusals as Keboola answers them (docs/storage-api.md#tables): what is not in
 * the project is 404 (another project's bucket or table is not revealed), conflicts and bad
 * parameters 400. Anything else is not a user error and becomes a 500.
 */
export function tableStoreError(error: unknown): unknown {
  if (error instanceof StoreError || !(error instanceof UserError)) return error;
  if (error instanceof TableNotFound)
    return StoreError.keboola(KEBOOLA_ERRORS.tablesNotFound, error.message, undefined, error.gexCode);
  if (error instanceof BucketNotFound)
    return StoreError.keboola(KEBOOLA_ERRORS.bucketsNotFound, error.message, undefined, error.gexCode);
  if (error instanceof BucketExists)
    return StoreError.keboola(KEBOOLA_ERRORS.bucketsAlreadyExists, error.message, undefined, error.gexCode);
  if (error instanceof BucketNotEmpty)
    return StoreError.keboola(KEBOOLA_ERRORS.bucketsNotEmpty, error.message, undefined, error.gexCode);
  if (error instanceof ColumnNotFound)
    return StoreError.keboola(KEBOOLA_ERRORS.columnsNotFound, error.message, undefined, error.gexCode);
  if (error instanceof MetadataNotFound)
    return StoreError.keboola(KEBOOLA_ERRORS.metadataNotFound, error.message, undefined, error.gexCode);
  if (error instanceof MetadataInvalid)
    return new StoreError(400, metadataProblemCode(error.problem), error.message, undefined, error.gexCode);
  return StoreError.keboola(KEBOOLA_ERRORS.tablesValidation, error.message, undefined, error.gexCode);
}

/** Runs a table operation, answering its refusals as Keboola does. */
export async function tableCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw tableStoreError(error);
  }
}

/** A table id from the URL: one that cannot exist is not found (and the message says why). */
export function pathTableId(text: string): string {
  try {
    parseTableId(text, 'The table id in the URL');
  } catch (error) {
    if (error instanceof UserError)
      throw StoreError.keboola(KEBOOLA_ERRORS.tablesNotFound, error.message, undefined, 'GEX_TABLE_NOT_FOUND');
    throw error;
  }
  return text;
}

export function pathBucketId(text: string): string {
  try {
    return checkBucketId(text);
  } catch (error) {
    if (error instanceof UserError)
      throw StoreError.keboola(
        KEBOOLA_ERRORS.bucketsNotFound,
        `${error.message} (bucket id in the URL)`,
        undefined,
        'GEX_BUCKET_NOT_FOUND',
      );
    throw error;
  }
}

/** Writes need a token that may write (Keboola: 403 for a read-only token). */
export function requireWriteAccess(session: Session): void {
  if (session.token.readOnly)
    throw StoreError.accessDenied("You don't have access to the resource: the token is read-only.");
}
