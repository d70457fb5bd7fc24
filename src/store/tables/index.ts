export { ProjectTables, MAX_PREVIEW_ROWS, type BucketInfo, type LoadResult, type TableDetail, type TablePreview } from './project-tables.js';
export { parseLoadManifest, type LoadManifest } from './manifest.js';
export { parseTableId, type TableId } from './table-id.js';
