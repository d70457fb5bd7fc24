import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../../common/errors.js';
import { displayId, displayText } from '../../common/log-text.js';
import type { Database } from '../sql/database.js';
import { Catalog, qualifiedName, type CatalogTable } from './catalog.js';
import { parseLoadManifest } from './manifest.js';
import { quoteIdentifier } from './physical-names.js';
import { checkBucketId, parseTableId, tableIdText } from './table-id.js';
import { TableLoader, type LoadResult } from './table-loader.js';

export type { LoadResult } from './table-loader.js';

export interface BucketInfo {
  readonly id: string;
  readonly stage: 'in' | 'out';
  readonly created: string;
}

export interface TableDetail {
  readonly id: string;
  readonly bucketId: string;
  readonly name: string;
  readonly columns: string[];
  readonly primaryKey: string[];
  readonly rowsCount: number;
  readonly created: string;
  readonly lastImportDate: string;
  readonly lastChangeDate: string | null;
}

export interface TablePreview {
  readonly columns: string[];
  readonly rows: string[][];
}

/** Most rows a preview returns. */
export const MAX_PREVIEW_ROWS = 1000;
/** Largest manifest file read (a manifest is a few hundred bytes; this bounds a hostile one). */
const MAX_MANIFEST_BYTES = 1024 * 1024;

/**
 * A project's Storage tables in the store's database: loading `out/tables` files (one
 * transaction per table) and reading buckets and tables back.
 */
export class ProjectTables {
  constructor(
    private readonly db: Database,
    private readonly projectId: number,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Loads a CSV file with its parsed manifest. The table is left as it was when anything fails.
   * `defaultDestination` is used when the manifest names none.
   */
  async load(file: string, manifest: unknown, defaultDestination?: string): Promise<LoadResult> {
    const label = path.basename(file);
    const parsed = parseLoadManifest(manifest, `${label}.manifest`, defaultDestination);
    return this.db.transaction((tx) => new TableLoader(tx, this.db.dialect, this.projectId).load({ file, label, manifest: parsed, now: this.now() }));
  }

  /** Loads `file` with the manifest beside it (`<file>.manifest`, optional: then `defaultDestination`). */
  async loadFile(file: string, defaultDestination?: string): Promise<LoadResult> {
    return this.load(file, await readManifest(`${file}.manifest`), defaultDestination);
  }

  async listBuckets(): Promise<BucketInfo[]> {
    const buckets = await new Catalog(this.db, this.projectId).buckets();
    return buckets.map((b) => ({ id: b.id, stage: b.id.startsWith('in.') ? 'in' : 'out', created: b.created }));
  }

  /** The project's tables, or one bucket's. */
  async listTables(bucketId?: string): Promise<TableDetail[]> {
    return this.db.transaction(async (tx) => {
      const tables = await new Catalog(tx, this.projectId).tables(bucketId === undefined ? undefined : checkBucketId(bucketId));
      return Promise.all(tables.map(async (t) => detail(t, await rowsCount(tx, t))));
    }, { readOnly: true });
  }

  async table(tableId: string): Promise<TableDetail> {
    return this.db.transaction(async (tx) => {
      const table = await this.existing(new Catalog(tx, this.projectId), tableId);
      return detail(table, await rowsCount(tx, table));
    }, { readOnly: true });
  }

  /** The first `limit` rows (insertion order), of the chosen columns or all. */
  async preview(tableId: string, options: { limit?: number; columns?: string[] } = {}): Promise<TablePreview> {
    const limit = options.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 0 || limit > MAX_PREVIEW_ROWS) throw new UserError(`A preview's limit must be an integer from 0 to ${MAX_PREVIEW_ROWS}.`);
    return this.db.transaction(async (tx) => {
      const table = await this.existing(new Catalog(tx, this.projectId), tableId);
      const names = options.columns ?? table.columns.map((c) => c.name);
      const physical = names.map((name) => {
        const column = table.columns.find((c) => c.name === name);
        if (!column) throw new UserError(`Table ${displayId(tableId)} has no column ${displayId(name)}.`);
        return quoteIdentifier(column.physical);
      });
      if (physical.length === 0) throw new UserError('A preview needs at least one column.');
      const rows = await tx.all<Record<string, string>>(`SELECT ${physical.map((p, i) => `${p} AS c${i}`).join(', ')} FROM ${qualifiedName(table)} LIMIT ?`, [limit]);
      return { columns: names, rows: rows.map((r) => names.map((_, i) => r[`c${i}`])) };
    }, { readOnly: true });
  }

  async deleteTable(tableId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const catalog = new Catalog(tx, this.projectId, this.db.dialect.forUpdate);
      const table = await this.existing(catalog, tableId);
      await tx.run(`DROP TABLE ${qualifiedName(table)}`);
      await catalog.deleteTable(table.id);
    });
  }

  /** Deletes a bucket with all its tables. */
  async deleteBucket(bucketId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const catalog = new Catalog(tx, this.projectId, this.db.dialect.forUpdate);
      const bucket = await catalog.bucket(checkBucketId(bucketId));
      if (!bucket) throw new UserError(`Bucket ${displayId(bucketId)} does not exist in this project.`);
      for (const table of await catalog.tables(bucketId)) {
        await tx.run(`DROP TABLE ${qualifiedName(table)}`);
        await catalog.deleteTable(table.id);
      }
      if (bucket.physicalSchema !== null) await tx.run(`DROP SCHEMA ${quoteIdentifier(bucket.physicalSchema)}`);
      await catalog.deleteBucket(bucketId);
    });
  }

  private async existing(catalog: Catalog, tableId: string): Promise<CatalogTable> {
    const table = await catalog.table(parseTableId(tableId));
    if (!table) throw new UserError(`Table ${displayId(tableId)} does not exist in this project.`);
    return table;
  }
}

async function rowsCount(tx: Pick<Database, 'get'>, table: CatalogTable): Promise<number> {
  const row = await tx.get<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${qualifiedName(table)}`);
  return Number(row?.n ?? 0);
}

function detail(t: CatalogTable, rows: number): TableDetail {
  return {
    id: tableIdText(t.id),
    bucketId: t.id.bucketId,
    name: t.id.name,
    columns: t.columns.map((c) => c.name),
    primaryKey: [...t.primaryKey],
    rowsCount: rows,
    created: t.created,
    lastImportDate: t.lastImportDate,
    lastChangeDate: t.lastChangeDate,
  };
}

/** A manifest file's JSON; an absent file is an empty manifest. */
async function readManifest(file: string): Promise<unknown> {
  let text: string;
  try {
    const data = await readFile(file);
    if (data.length > MAX_MANIFEST_BYTES) throw new UserError(`${displayText(path.basename(file))} is larger than ${MAX_MANIFEST_BYTES} bytes.`);
    text = data.toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UserError(`${displayText(path.basename(file))} is not valid JSON: ${(error as Error).message}`);
  }
}
