export {
  ProjectTables,
  MAX_PREVIEW_ROWS,
  EXPORT_BATCH_ROWS,
  type BucketInfo,
  type LoadResult,
  type TableDetail,
  type TablePreview,
} from './project-tables.js';
export { parseLoadManifest, readManifest, type LoadManifest } from './manifest.js';
export { readCsvHeader, type CsvSource } from './csv-source.js';
export { checkBucketId, parseTableId, tableIdText, type TableId } from './table-id.js';
export { MAX_WHERE_VALUES, type TableQuery } from './table-query.js';
export { parseChangedSince, storedMoment } from './moments.js';
export { BucketExists, BucketNotEmpty, BucketNotFound, TableNotFound } from './errors.js';
export {
  StorageJobs,
  endOrphanedJobs,
  ORPHANED_JOB_MESSAGE,
  type OrphanCheck,
  type StorageJob,
  type StorageJobLiveness,
  type StorageJobStatus,
} from './storage-jobs.js';
export { keboolaCsv } from './keboola-csv.js';
