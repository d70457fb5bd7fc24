import type { MetadataItem } from './metadata-input.js';

/** What ProjectTables gives and takes: buckets, tables, previews and metadata calls, and their bounds. */

export interface BucketInfo {
  readonly id: string;
  readonly stage: 'in' | 'out';
  readonly created: string;
  readonly description: string;
  /** the bucket's own metadata, in the order it was first set */
  readonly metadata: readonly MetadataItem[];
}

export interface TableDetail {
  readonly id: string;
  readonly bucketId: string;
  readonly name: string;
  readonly columns: string[];
  readonly primaryKey: string[];
  readonly rowsCount: number;
  /** bytes the table takes in the database (pages of SQLite's file; PostgreSQL's relation with indexes) */
  readonly dataSizeBytes: number;
  readonly created: string;
  readonly lastImportDate: string;
  readonly lastChangeDate: string | null;
  /** the table's own metadata, in the order it was first set */
  readonly metadata: readonly MetadataItem[];
  /** its columns' metadata by column name (columns without any are absent); null when not read (lists) */
  readonly columnMetadata: ReadonlyMap<string, readonly MetadataItem[]> | null;
}

/** The object of a metadata call, as its URL names it. */
export type MetadataTargetId = { bucketId: string } | { tableId: string } | { columnId: string };

/** What a metadata call on a table sets: the table's own items and its columns'. */
export interface TableMetadataInput {
  readonly provider: unknown;
  readonly metadata?: unknown;
  readonly columnsMetadata?: unknown;
}

export interface TablePreview {
  readonly columns: string[];
  readonly rows: string[][];
}

/** Most rows a preview returns. */
export const MAX_PREVIEW_ROWS = 1000;
/** Rows per query of a read: bounds its memory whatever the table's size. */
export const EXPORT_BATCH_ROWS = 5000;
