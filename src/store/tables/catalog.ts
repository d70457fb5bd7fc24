import type { SqlExecutor } from '../sql/database.js';
import { quoteIdentifier } from './physical-names.js';
import type { TableId } from './table-id.js';

/** A column of a Storage table and its name in the database. */
export interface StoredColumn {
  readonly name: string;
  readonly physical: string;
}

/** A table's row in storage_tables, decoded. */
export interface CatalogTable {
  readonly projectId: number;
  readonly id: TableId;
  readonly physicalName: string;
  readonly physicalSchema: string | null;
  readonly columns: StoredColumn[];
  readonly primaryKey: string[];
  readonly created: string;
  readonly lastImportDate: string;
  readonly lastChangeDate: string | null;
}

export interface CatalogBucket {
  readonly id: string;
  readonly physicalSchema: string | null;
  readonly created: string;
  readonly description: string;
}

type Row = Record<string, unknown>;

const TABLE_SELECT = `SELECT t.project_id, t.bucket_id, t.name, t.physical_name, t.columns, t.primary_key, t.created,
  t.last_import_date, t.last_change_date, b.physical_schema
  FROM storage_tables t JOIN storage_buckets b ON b.project_id = t.project_id AND b.id = t.bucket_id`;

function decodeTable(row: Row): CatalogTable {
  return {
    projectId: Number(row.project_id),
    id: { bucketId: String(row.bucket_id), name: String(row.name) },
    physicalName: String(row.physical_name),
    physicalSchema: row.physical_schema === null ? null : String(row.physical_schema),
    columns: JSON.parse(String(row.columns)) as StoredColumn[],
    primaryKey: JSON.parse(String(row.primary_key)) as string[],
    created: String(row.created),
    lastImportDate: String(row.last_import_date),
    lastChangeDate: row.last_change_date === null ? null : String(row.last_change_date),
  };
}

const BUCKET_SELECT = 'SELECT id, physical_schema, created, description FROM storage_buckets';

function decodeBucket(row: Row): CatalogBucket {
  return {
    id: String(row.id),
    physicalSchema: row.physical_schema === null ? null : String(row.physical_schema),
    created: String(row.created),
    description: String(row.description ?? ''),
  };
}

/** `"schema"."table"` or `"table"`: the one way a Storage table is named in SQL. */
export function qualifiedName(table: Pick<CatalogTable, 'physicalName' | 'physicalSchema'>): string {
  const name = quoteIdentifier(table.physicalName);
  return table.physicalSchema === null ? name : `${quoteIdentifier(table.physicalSchema)}.${name}`;
}

/** The metadata of a project's buckets and tables (storage_buckets, storage_tables). */
export class Catalog {
  constructor(
    private readonly tx: SqlExecutor,
    private readonly projectId: number,
    private readonly forUpdate = '',
  ) {}

  async table(id: TableId): Promise<CatalogTable | undefined> {
    const row = await this.tx.get<Row>(
      `${TABLE_SELECT} WHERE t.project_id = ? AND t.bucket_id = ? AND t.name = ?${this.forUpdate}`,
      [this.projectId, id.bucketId, id.name],
    );
    return row && decodeTable(row);
  }

  async tables(bucketId?: string): Promise<CatalogTable[]> {
    const rows =
      bucketId === undefined
        ? await this.tx.all<Row>(`${TABLE_SELECT} WHERE t.project_id = ? ORDER BY t.bucket_id, t.name`, [
            this.projectId,
          ])
        : await this.tx.all<Row>(`${TABLE_SELECT} WHERE t.project_id = ? AND t.bucket_id = ? ORDER BY t.name`, [
            this.projectId,
            bucketId,
          ]);
    return rows.map(decodeTable);
  }

  async bucket(id: string): Promise<CatalogBucket | undefined> {
    const row = await this.tx.get<Row>(`${BUCKET_SELECT} WHERE project_id = ? AND id = ?${this.forUpdate}`, [
      this.projectId,
      id,
    ]);
    return row && decodeBucket(row);
  }

  async buckets(): Promise<CatalogBucket[]> {
    const rows = await this.tx.all<Row>(`${BUCKET_SELECT} WHERE project_id = ? ORDER BY id`, [this.projectId]);
    return rows.map(decodeBucket);
  }

  async insertBucket(bucket: CatalogBucket): Promise<void> {
    await this.tx.run(
      'INSERT INTO storage_buckets (project_id, id, physical_schema, created, description) VALUES (?, ?, ?, ?, ?)',
      [this.projectId, bucket.id, bucket.physicalSchema, bucket.created, bucket.description],
    );
  }

  async saveTable(table: CatalogTable, isNew: boolean): Promise<void> {
    const values = [
      JSON.stringify(table.columns),
      JSON.stringify(table.primaryKey),
      table.lastImportDate,
      table.lastChangeDate,
    ];
    const key = [this.projectId, table.id.bucketId, table.id.name];
    if (isNew) {
      await this.tx.run(
        `INSERT INTO storage_tables (project_id, bucket_id, name, physical_name, created, columns, primary_key, last_import_date, last_change_date)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [...key, table.physicalName, table.created, ...values],
      );
    } else {
      await this.tx.run(
        'UPDATE storage_tables SET columns = ?, primary_key = ?, last_import_date = ?, last_change_date = ? WHERE project_id = ? AND bucket_id = ? AND name = ?',
        [...values, ...key],
      );
    }
  }

  async deleteTable(id: TableId): Promise<void> {
    await this.tx.run('DELETE FROM storage_tables WHERE project_id = ? AND bucket_id = ? AND name = ?', [
      this.projectId,
      id.bucketId,
      id.name,
    ]);
  }

  async deleteBucket(id: string): Promise<void> {
    await this.tx.run('DELETE FROM storage_buckets WHERE project_id = ? AND id = ?', [this.projectId, id]);
  }
}
