import type { ProjectTables, TableDetail, TablePreview, TableQuery } from './tables/index.js';

/**
 * A project's Storage tables as the `gex tables` commands read and delete them, whatever holds
 * them: the embedded store's database (ProjectTables) or a Storage API over HTTP (gex serve or a
 * Keboola stack, see HttpTableSource).
 */
export interface TableSource {
  /** the project's tables (ordered by id), or one bucket's; an unknown bucket is a UserError */
  listTables(bucketId?: string): Promise<TableDetail[]>;
  table(tableId: string): Promise<TableDetail>;
  /** the first rows of a query (`limit` 100 unless given; at most MAX_PREVIEW_ROWS) */
  preview(tableId: string, query: TableQuery): Promise<TablePreview>;
  /**
   * Every row of a query, in insertion order, in batches (awaited: memory stays bounded). A
   * source that cannot read them all refuses with a UserError before `onBatch` is first called,
   * never returning fewer rows silently. Returns the columns read.
   */
  read(tableId: string, query: TableQuery, onBatch: (rows: string[][]) => Promise<void>): Promise<string[]>;
  deleteTable(tableId: string): Promise<void>;
  /** Deletes a bucket; `withTables` must be set to delete one that has tables (they go with it). */
  deleteBucket(bucketId: string, withTables: boolean): Promise<void>;
}

/** The embedded store's tables of one project as a TableSource. */
export function embeddedTableSource(tables: ProjectTables): TableSource {
  return {
    async listTables(bucketId) {
      // an unknown bucket is an error, not an empty list
      if (bucketId !== undefined) await tables.bucket(bucketId);
      return tables.listTables(bucketId);
    },
    table: (tableId) => tables.table(tableId),
    preview: (tableId, query) => tables.preview(tableId, query),
    read: (tableId, query, onBatch) => tables.read(tableId, query, onBatch),
    deleteTable: (tableId) => tables.deleteTable(tableId),
    // one transaction checks and deletes: a table loaded meanwhile is never deleted unasked
    deleteBucket: (bucketId, withTables) => tables.deleteBucket(bucketId, { onlyEmpty: !withTables }),
  };
}
