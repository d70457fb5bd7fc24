export { ProjectTables, type LoadOrigin, type LoadResult } from './project-tables.js';
export {
  MAX_PREVIEW_ROWS,
  EXPORT_BATCH_ROWS,
  type BucketInfo,
  type MetadataTargetId,
  type TableDetail,
  type TableMetadataInput,
  type TablePreview,
} from './table-shapes.js';
export {
  MetadataInvalid,
  SYSTEM_PROVIDER,
  checkColumnMetadata,
  checkMetadataList,
  checkProvider,
  MAX_METADATA_PER_OBJECT,
  MAX_METADATA_PER_WRITE,
  type ColumnMetadataInput,
  type MetadataEntry,
  type MetadataItem,
  type MetadataProblem,
} from './metadata-input.js';
export { systemMetadata, USER_PROVIDER } from './table-loader.js';
export type { TableMetadata } from './storage-metadata.js';
export { parseLoadManifest, readManifest, type LoadManifest } from './manifest.js';
export { readCsvHeader, type CsvSource } from './csv-source.js';
export { checkBucketId, parseTableId, tableIdText, type TableId } from './table-id.js';
export { MAX_WHERE_VALUES, type TableQuery } from './table-query.js';
export { parseChangedSince, storedMoment } from './moments.js';
export {
  BucketExists,
  BucketNotEmpty,
  BucketNotFound,
  ColumnNotFound,
  MetadataNotFound,
  TableNotFound,
} from './errors.js';
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
