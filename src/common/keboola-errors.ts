/**
 * Keboola's error codes, the ones gex answers with or matches on, in one table: `code` is what
 * Keboola's clients match on (an answer's `code`, the Job Queue's and Scheduler's
 * `context.errorCode`, a Storage job's `error.code`), `status` the HTTP status it is answered with
 * (absent for a code that only names a failed Storage job's error), `message` Keboola's wording
 * where it is fixed. gex's own codes are the catalogue beside it (error-catalogue.ts), sent as
 * `gexCode`; docs/storage-api.md#errors describes both. src names these codes only here
 * (test/common/keboola-errors.test.ts).
 */

export interface KeboolaError {
  readonly code: string;
  readonly status?: number;
  readonly message?: string;
}

export const KEBOOLA_ERRORS = {
  // tokens and access
  tokenInvalid: { code: 'storage.tokenInvalid', status: 401, message: 'Invalid access token' },
  accessDenied: { code: 'accessDenied', status: 403, message: "You don't have access to the resource." },
  tokensValidation: { code: 'storage.tokens.validation', status: 400 },
  tokensNotFound: { code: 'storage.tokens.notFound', status: 404 },
  cannotDeleteMasterToken: { code: 'storage.tokens.cannotDeleteMasterToken', status: 400 },
  decryptValidation: { code: 'storage.gex.decrypt.validation', status: 400 },

  // requests: bodies, limits, framework refusals
  invalidRequest: { code: 'storage.invalidRequest', status: 400 },
  validation: { code: 'storage.validation', status: 400 },
  invalidId: { code: 'storage.invalidId', status: 400 },
  invalidJson: { code: 'validation.invalidJson', status: 400 },
  invalidForm: { code: 'validation.invalidForm', status: 400 },
  invalidEncoding: { code: 'validation.invalidEncoding', status: 400 },
  requestAborted: { code: 'storage.requestAborted', status: 400 },
  requestTimeout: { code: 'storage.requestTimeout', status: 408 },
  requestTooLarge: { code: 'storage.requestTooLarge', status: 413 },
  uriTooLong: { code: 'storage.uriTooLong', status: 414 },
  unsupportedMediaType: { code: 'storage.unsupportedMediaType', status: 415 },
  headersTooLarge: { code: 'storage.headersTooLarge', status: 431 },
  notFound: { code: 'notFound', status: 404 },
  internalError: { code: 'storage.internalError', status: 500 },
  notImplemented: { code: 'notImplemented', status: 501 },
  databaseUnavailable: { code: 'storage.databaseUnavailable', status: 503 },
  fileStorageUnavailable: { code: 'storage.fileStorageUnavailable', status: 503 },

  // configurations and rows
  componentsValidation: { code: 'storage.components.validation', status: 400 },
  componentsRowsValidation: { code: 'storage.componentsRows.validation', status: 400 },
  invalidConfigurationFormat: { code: 'validation.invalidConfigurationFormat', status: 400 },
  invalidStateFormat: { code: 'validation.invalidStateFormat', status: 400 },
  invalidRowSortOrder: { code: 'validation.invalidRowSortOrder', status: 400 },
  configurationAlreadyExists: { code: 'configurationAlreadyExists', status: 400 },
  configurationRowAlreadyExists: { code: 'configurationRowAlreadyExists', status: 400 },
  configurationVersionConflict: { code: 'storage.components.configurations.versionConflict', status: 409 },

  // buckets, tables, columns, their metadata
  bucketsValidation: { code: 'storage.buckets.validation', status: 400 },
  bucketsNotFound: { code: 'storage.buckets.notFound', status: 404 },
  bucketsAlreadyExists: { code: 'storage.buckets.alreadyExists', status: 400 },
  bucketsNotEmpty: { code: 'storage.buckets.notEmpty', status: 400 },
  tablesValidation: { code: 'storage.tables.validation', status: 400 },
  tablesNotFound: { code: 'storage.tables.notFound', status: 404 },
  previewTooLarge: { code: 'storage.tables.previewTooLarge', status: 400 },
  previewCapacity: { code: 'storage.tables.previewCapacity', status: 503 },
  columnsNotFound: { code: 'storage.columns.notFound', status: 404 },
  metadataNotFound: { code: 'storage.metadata.notFound', status: 404 },
  metadataInvalidId: { code: 'storage.metadata.invalidId', status: 400 },
  metadataInvalidParameter: { code: 'storage.metadata.invalidParameter', status: 400 },

  // File Storage
  filesValidation: { code: 'storage.files.validation', status: 400 },
  filesNotFound: { code: 'storage.files.notFound', status: 404 },
  filesTooLarge: { code: 'storage.files.tooLarge', status: 413 },
  filesNotUploaded: { code: 'storage.files.notUploaded', status: 400 },
  filesAlreadyUploaded: { code: 'storage.files.alreadyUploaded', status: 400 },
  filesUploadCapacity: { code: 'storage.files.uploadCapacity', status: 503 },

  // Storage jobs: an answer's code, or a failed job's `error.code`
  jobsNotFound: { code: 'storage.jobs.notFound', status: 404 },
  jobsError: { code: 'storage.jobs.error' },
  jobsInternal: { code: 'storage.jobs.internal' },
  jobsStopped: { code: 'storage.jobs.stopped' },
  jobsOrphaned: { code: 'storage.jobs.orphaned' },

  // the Job Queue API
  queueValidation: { code: 'queue.validation', status: 400 },
  queueJobNotFound: { code: 'queue.jobNotFound', status: 404 },
  queueJobFinished: { code: 'queue.jobFinished', status: 400 },

  // the Scheduler API
  schedulerValidation: { code: 'scheduler.validation', status: 400 },
  schedulerNotFound: { code: 'scheduler.notFound', status: 404 },
  schedulerConfigurationNotFound: { code: 'scheduler.configurationNotFound', status: 404 },

  // the Notification API
  notificationValidation: { code: 'notification.validation', status: 400 },
  notificationNotFound: { code: 'notification.notFound', status: 404 },
} as const satisfies Record<string, KeboolaError>;

/** An entry answered over HTTP: one with a status. */
export type KeboolaAnswer = KeboolaError & { readonly status: number };

/**
 * The family of Storage metadata refusals: `storage.metadata.<problem>` with the problem of
 * store/tables/metadata-input.ts (invalidProvider, tooMany, invalidStructure, …).
 */
export const metadataProblemCode = (problem: string): string => `storage.metadata.${problem}`;
