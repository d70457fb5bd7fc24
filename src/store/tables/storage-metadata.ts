import { createHash } from 'node:crypto';
import type { Database, SqlExecutor, SqlParam } from '../sql/database.js';
import { MAX_METADATA_PER_OBJECT, MetadataInvalid, type MetadataEntry, type MetadataItem } from './metadata-input.js';
import { tableIdText, type TableId } from './table-id.js';
import { displayId } from '../../common/log-text.js';

/**
 * Metadata of a project's buckets, tables and columns (migration 13, `storage_metadata`): items
 * of (provider, key) → value, set by provider and key (a known pair keeps its id and place),
 * listed in the order they were first set, deleted by id or with their bucket or table. Runs in
 * the caller's transaction; ids are reserved before it (reserveMetadataIds). Rows name their object by bucket, table and column (`''` where the
 * object is a bucket or a table); the indexes use hashes of those names (`*_ref`), so that names of
 * any allowed length fit PostgreSQL's index rows, and every query also compares the names.
 */

/** A bucket (`table` absent), a table (`column` absent) or a column. */
export interface MetadataTarget {
  readonly bucketId: string;
  readonly table?: string;
  readonly column?: string;
}

/**
 * `count` new metadata ids, increasing, in a transaction of their own: taken before the write that
 * uses them, so a long load never holds the counter's row (concurrent loads and calls do not wait
 * on each other); ids of a write that fails are skipped.
 */
export async function reserveMetadataIds(db: Database, count: number): Promise<number[]> {
  if (count === 0) return [];
  const row = await db.transaction((tx) =>
    tx.get<Row>(
      "INSERT INTO sequences (name, value) VALUES ('storage_metadata', ?) ON CONFLICT (name) DO UPDATE SET value = sequences.value + ? RETURNING value",
      [count, count],
    ),
  );
  const last = Number(row!.value);
  return Array.from({ length: count }, (_, i) => last - count + 1 + i);
}

/** One provider's items for one object. */
export interface MetadataWrite {
  readonly target: MetadataTarget;
  readonly provider: string;
  readonly entries: readonly MetadataEntry[];
}

/** A table's own items and its columns' (by column name, in the order of their first item). */
export interface TableMetadata {
  readonly metadata: MetadataItem[];
  readonly columns: Map<string, MetadataItem[]>;
}

type Row = Record<string, unknown>;

const ref = (...parts: string[]): string =>
  createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32);

const refs = (t: MetadataTarget) => ({
  bucket: ref(t.bucketId),
  table: ref(t.bucketId, t.table ?? ''),
  target: ref(t.bucketId, t.table ?? '', t.column ?? ''),
});

const COLUMNS =
  'id, project_id, bucket_id, table_name, column_name, bucket_ref, table_ref, target_ref, provider, meta_key, meta_value, timestamp';
const SELECT =
  'SELECT id, bucket_id, table_name, column_name, provider, meta_key, meta_value, timestamp FROM storage_metadata';
/** Rows of one multi-row upsert: 12 parameters each, well under both databases' limits. */
const ROWS_PER_STATEMENT = 400;

function item(row: Row): MetadataItem {
  return {
    id: String(row.id),
    key: String(row.meta_key),
    value: String(row.meta_value),
    provider: String(row.provider),
    timestamp: String(row.timestamp),
  };
}

/** What a target is called in a message. */
export function targetText(t: MetadataTarget): string {
  if (t.table === undefined) return `bucket ${displayId(t.bucketId)}`;
  const table = tableIdText({ bucketId: t.bucketId, name: t.table });
  return t.column === undefined
    ? `table ${displayId(table)}`
    : `column ${displayId(t.column)} of table ${displayId(table)}`;
}

export class StorageMetadata {
  constructor(
    private readonly tx: SqlExecutor,
    private readonly projectId: number,
  ) {}

  /** The items of one object, in the order they were first set. */
  async list(target: MetadataTarget): Promise<MetadataItem[]> {
    const r = refs(target);
    const rows = await this.tx.all<Row>(
      `${SELECT} WHERE project_id = ? AND target_ref = ? AND bucket_id = ? AND table_name = ? AND column_name = ? ORDER BY id`,
      [this.projectId, r.target, target.bucketId, target.table ?? '', target.column ?? ''],
    );
    return rows.map(item);
  }

  /** A table's own items and its columns'. */
  async ofTable(table: TableId): Promise<TableMetadata> {
    const rows = await this.tx.all<Row>(
      `${SELECT} WHERE project_id = ? AND table_ref = ? AND bucket_id = ? AND table_name = ? ORDER BY id`,
      [this.projectId, ref(table.bucketId, table.name), table.bucketId, table.name],
    );
    const metadata: MetadataItem[] = [];
    const columns = new Map<string, MetadataItem[]>();
    for (const row of rows) {
      const column = String(row.column_name);
      if (column === '') metadata.push(item(row));
      else columns.set(column, [...(columns.get(column) ?? []), item(row)]);
    }
    return { metadata, columns };
  }

  /**
   * The metadata of the project's buckets and tables (one bucket's, when given), by bucket id and
   * by table id; the columns' only with `columns`.
   */
  async ofProject(
    options: { bucketId?: string; columns?: boolean } = {},
  ): Promise<{ buckets: Map<string, MetadataItem[]>; tables: Map<string, TableMetadata> }> {
    const where = ['project_id = ?'];
    const params: SqlParam[] = [this.projectId];
    if (options.bucketId !== undefined) {
      where.push('bucket_ref = ?', 'bucket_id = ?');
      params.push(ref(options.bucketId), options.bucketId);
    }
    if (!options.columns) where.push("column_name = ''");
    const rows = await this.tx.all<Row>(`${SELECT} WHERE ${where.join(' AND ')} ORDER BY id`, params);
    const buckets = new Map<string, MetadataItem[]>();
    const tables = new Map<string, TableMetadata>();
    for (const row of rows) {
      const bucketId = String(row.bucket_id);
      const name = String(row.table_name);
      if (name === '') {
        buckets.set(bucketId, [...(buckets.get(bucketId) ?? []), item(row)]);
        continue;
      }
      const id = tableIdText({ bucketId, name });
      const table = tables.get(id) ?? { metadata: [], columns: new Map<string, MetadataItem[]>() };
      tables.set(id, table);
      const column = String(row.column_name);
      if (column === '') table.metadata.push(item(row));
      else table.columns.set(column, [...(table.columns.get(column) ?? []), item(row)]);
    }
    return { buckets, tables };
  }

  /**
   * Sets the items of each write (a known provider and key gets the new value and timestamp, and
   * keeps its id); refuses, naming the object, when an object would hold more than
   * MAX_METADATA_PER_OBJECT items — the caller's transaction then leaves everything as it was.
   */
  async set(writes: readonly MetadataWrite[], timestamp: string, ids: readonly number[]): Promise<void> {
    // one row per object, provider and key (a statement may not upsert a row twice): the last value wins
    const byKey = new Map<string, SqlParam[]>();
    for (const w of writes) {
      const r = refs(w.target);
      for (const e of w.entries) {
        byKey.set(JSON.stringify([r.target, w.provider, e.key]), [
          this.projectId,
          w.target.bucketId,
          w.target.table ?? '',
          w.target.column ?? '',
          r.bucket,
          r.table,
          r.target,
          w.provider,
          e.key,
          e.value,
          timestamp,
        ]);
      }
    }
    const rows = [...byKey.values()];
    if (rows.length === 0) return;
    if (ids.length < rows.length)
      throw new Error(`${rows.length} metadata items need ids, ${ids.length} were reserved`);
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      const chunk = rows.slice(i, i + ROWS_PER_STATEMENT);
      await this.tx.run(
        `INSERT INTO storage_metadata (${COLUMNS}) VALUES ${chunk.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
         ON CONFLICT (project_id, target_ref, provider, meta_key) DO UPDATE SET meta_value = excluded.meta_value, timestamp = excluded.timestamp`,
        chunk.flatMap((row, j) => [ids[i + j], ...row]),
      );
    }
    // every object written to stays within its bound (counted per table: the table and its columns)
    const checked = new Set<string>();
    for (const w of writes) {
      const tableRef = refs(w.target).table;
      if (checked.has(tableRef)) continue;
      checked.add(tableRef);
      const over = await this.tx.get<Row>(
        `SELECT bucket_id, table_name, column_name, COUNT(*) AS n FROM storage_metadata
         WHERE project_id = ? AND table_ref = ? AND bucket_id = ? AND table_name = ?
         GROUP BY bucket_id, table_name, column_name HAVING COUNT(*) > ?`,
        [this.projectId, tableRef, w.target.bucketId, w.target.table ?? '', MAX_METADATA_PER_OBJECT],
      );
      if (over) {
        const target: MetadataTarget = {
          bucketId: String(over.bucket_id),
          table: over.table_name === '' ? undefined : String(over.table_name),
          column: over.column_name === '' ? undefined : String(over.column_name),
        };
        throw new MetadataInvalid(
          'tooMany',
          `The ${targetText(target)} would hold ${Number(over.n)} metadata items, more than the ${MAX_METADATA_PER_OBJECT} one object may hold; delete some first. Nothing was changed.`,
        );
      }
    }
  }

  /** Deletes one item of the object; false when the object has no item of that id. */
  async delete(target: MetadataTarget, id: number): Promise<boolean> {
    const r = refs(target);
    const { changes } = await this.tx.run(
      'DELETE FROM storage_metadata WHERE project_id = ? AND target_ref = ? AND bucket_id = ? AND table_name = ? AND column_name = ? AND id = ?',
      [this.projectId, r.target, target.bucketId, target.table ?? '', target.column ?? '', id],
    );
    return changes > 0;
  }

  /** Deletes a table's metadata and its columns'. */
  async deleteTable(table: TableId): Promise<void> {
    await this.tx.run(
      'DELETE FROM storage_metadata WHERE project_id = ? AND table_ref = ? AND bucket_id = ? AND table_name = ?',
      [this.projectId, ref(table.bucketId, table.name), table.bucketId, table.name],
    );
  }

  /** Deletes a bucket's metadata and its tables' and columns'. */
  async deleteBucket(bucketId: string): Promise<void> {
    await this.tx.run('DELETE FROM storage_metadata WHERE project_id = ? AND bucket_ref = ? AND bucket_id = ?', [
      this.projectId,
      ref(bucketId),
      bucketId,
    ]);
  }
}
