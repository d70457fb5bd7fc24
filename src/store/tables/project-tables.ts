import path from 'node:path';
import { UserError } from '../../common/errors.js';
import { excerptId } from '../../common/log-text.js';
import { timestamp } from '../identifiers.js';
import type { Database, Dialect, SqlExecutor } from '../sql/database.js';
import { createBucket } from './bucket-creation.js';
import { Catalog, qualifiedName, type CatalogBucket, type CatalogTable } from './catalog.js';
import {
  BucketExists,
  BucketNotEmpty,
  BucketNotFound,
  ColumnNotFound,
  MetadataNotFound,
  TableNotFound,
} from './errors.js';
import type { CsvSource } from './csv-source.js';
import { parseLoadManifest, readManifest } from './manifest.js';
import { quoteIdentifier } from './physical-names.js';
import { compileQuery, readPages, type TableQuery } from './table-query.js';
import { checkBucketId, parseTableId, tableIdText } from './table-id.js';
import {
  EXPORT_BATCH_ROWS,
  MAX_PREVIEW_ROWS,
  type BucketInfo,
  type MetadataTargetId,
  type TableDetail,
  type TableMetadataInput,
  type TablePreview,
} from './table-shapes.js';
import { loadMetadataCount, TableLoader, type LoadOrigin, type LoadResult } from './table-loader.js';
import {
  checkColumnMetadata,
  checkMetadataList,
  checkProvider,
  MetadataInvalid,
  type MetadataItem,
} from './metadata-input.js';
import {
  reserveMetadataIds,
  StorageMetadata,
  targetText,
  type MetadataTarget,
  type TableMetadata,
} from './storage-metadata.js';

export type { LoadOrigin, LoadResult } from './table-loader.js';
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

  /** The database the tables live in, as Keboola's `backend` field names it. */
  get backend(): 'sqlite' | 'postgresql' {
    return this.db.dialect.name === 'sqlite' ? 'sqlite' : 'postgresql';
  }

  /**
   * Loads a CSV file with its parsed manifest. The table is left as it was when anything fails.
   * `origin`: the run whose output mapping loads it (its system metadata; the component provides
   * the manifest's metadata).
   */
  async load(file: string, manifest: unknown, origin?: LoadOrigin): Promise<LoadResult> {
    return this.loadFrom(file, path.basename(file), manifest, { origin });
  }

  /**
   * Loads a CSV from `source` (a path, or a function opening a stream of its bytes), named `label`
   * in errors, as `load` does: one transaction. A stream that fails fails the load.
   * `defaultDestination` is used when the manifest names none.
   */
  async loadFrom(
    source: CsvSource,
    label: string,
    manifest: unknown,
    options: { defaultDestination?: string; origin?: LoadOrigin } = {},
  ): Promise<LoadResult> {
    const file = source;
    const parsed = parseLoadManifest(manifest, `${label}.manifest`, options.defaultDestination);
    const metadataIds = await reserveMetadataIds(this.db, loadMetadataCount(parsed, options.origin));
    return this.db.transaction(
      (tx) =>
        new TableLoader(tx, this.db.dialect, this.projectId).load({
          file,
          label,
          manifest: parsed,
          now: this.now(),
          origin: options.origin,
          metadataIds,
        }),
      { bulk: true },
    );
  }

  /** Loads `file` with the manifest beside it (`<file>.manifest`, optional: then `defaultDestination`). */
  async loadFile(file: string, defaultDestination?: string): Promise<LoadResult> {
    return this.loadFrom(file, path.basename(file), await readManifest(`${file}.manifest`), { defaultDestination });
  }

  async listBuckets(): Promise<BucketInfo[]> {
    return this.db.transaction(
      async (tx) => {
        const buckets = await new Catalog(tx, this.projectId).buckets();
        const metadata = (await this.metadataOf(tx).ofProject()).buckets;
        return buckets.map((b) => bucketInfo(b, metadata.get(b.id)));
      },
      { readOnly: true },
    );
  }

  async bucket(bucketId: string): Promise<BucketInfo> {
    return this.db.transaction(
      async (tx) => {
        const bucket = await new Catalog(tx, this.projectId).bucket(checkBucketId(bucketId));
        if (!bucket) throw bucketNotFound(bucketId);
        return bucketInfo(bucket, await this.metadataOf(tx).list({ bucketId: bucket.id }));
      },
      { readOnly: true },
    );
  }

  /** Creates an empty bucket `<stage>.c-<name>`; refused when the project has it already. */
  async createBucket(input: { name: string; stage: 'in' | 'out'; description?: string }): Promise<BucketInfo> {
    const id = checkBucketId(`${input.stage}.c-${input.name}`);
    return this.db.transaction(async (tx) => {
      const catalog = new Catalog(tx, this.projectId, this.db.dialect.forUpdate);
      if (await catalog.bucket(id))
        throw new BucketExists(
          `Bucket ${excerptId(id)} already exists in this project; choose another name or delete it first.`,
        );
      return bucketInfo(
        await createBucket(tx, this.db.dialect, catalog, {
          id,
          created: timestamp(this.now()),
          description: input.description,
        }),
        [],
      );
    });
  }

  /**
   * The project's tables, or one bucket's, with their own metadata; their columns' metadata too
   * with `columnMetadata` (Keboola's `include=columnMetadata`).
   */
  async listTables(bucketId?: string, options: { columnMetadata?: boolean } = {}): Promise<TableDetail[]> {
    return this.db.transaction(
      async (tx) => {
        const catalog = new Catalog(tx, this.projectId);
        if (bucketId !== undefined && !(await catalog.bucket(checkBucketId(bucketId)))) throw bucketNotFound(bucketId);
        const tables = await catalog.tables(bucketId);
        const metadata = (await this.metadataOf(tx).ofProject({ bucketId, columns: options.columnMetadata })).tables;
        const details: TableDetail[] = [];
        for (const t of tables) {
          const own = metadata.get(tableIdText(t.id)) ?? { metadata: [], columns: new Map() };
          details.push(detail(t, await tableStats(tx, this.db.dialect, t), own, options.columnMetadata === true));
        }
        return details;
      },
      { readOnly: true },
    );
  }

  /** A table with its metadata and its columns'. */
  async table(tableId: string): Promise<TableDetail> {
    return this.db.transaction(
      async (tx) => {
        const table = await this.existing(new Catalog(tx, this.projectId), tableId);
        const metadata = await this.metadataOf(tx).ofTable(table.id);
        return detail(table, await tableStats(tx, this.db.dialect, table), metadata, true);
      },
      { readOnly: true },
    );
  }

  /** The metadata of a bucket, a table (its own) or a column (`in.c-b.t.column`). */
  async metadata(target: MetadataTargetId): Promise<MetadataItem[]> {
    return this.db.transaction(
      async (tx) => this.metadataOf(tx).list(await this.resolve(new Catalog(tx, this.projectId), target)),
      { readOnly: true },
    );
  }

  /** Sets a bucket's or a column's metadata by one provider; returns all the object's items. */
  async setMetadata(target: MetadataTargetId, provider: unknown, metadata: unknown): Promise<MetadataItem[]> {
    const checkedProvider = checkProvider(provider);
    const entries = checkMetadataList(metadata, 'metadata');
    const ids = await reserveMetadataIds(this.db, entries.length);
    return this.db.transaction(async (tx) => {
      const resolved = await this.resolve(new Catalog(tx, this.projectId, this.db.dialect.forUpdate), target);
      const store = this.metadataOf(tx);
      await store.set([{ target: resolved, provider: checkedProvider, entries }], timestamp(this.now()), ids);
      return store.list(resolved);
    });
  }

  /**
   * Sets a table's metadata and its columns' by one provider in one transaction (Keboola's table
   * metadata call); returns all the table's items and its columns'. A column the table lacks is refused.
   */
  async setTableMetadata(tableId: string, input: TableMetadataInput): Promise<TableMetadata> {
    if (input.metadata === undefined && input.columnsMetadata === undefined)
      throw new MetadataInvalid(
        'invalidParameter',
        'The metadata parameter must be an array of objects with "key" and "value" (give metadata, columnsMetadata or both).',
      );
    const provider = checkProvider(input.provider);
    const entries = input.metadata === undefined ? [] : checkMetadataList(input.metadata, 'metadata');
    const columns =
      input.columnsMetadata === undefined ? [] : checkColumnMetadata(input.columnsMetadata, 'columnsMetadata');
    const ids = await reserveMetadataIds(this.db, entries.length + columns.reduce((n, c) => n + c.entries.length, 0));
    return this.db.transaction(async (tx) => {
      const table = await this.existing(new Catalog(tx, this.projectId, this.db.dialect.forUpdate), tableId);
      const target = { bucketId: table.id.bucketId, table: table.id.name };
      const names = new Set(table.columns.map((c) => c.name));
      const missing = columns.find((c) => !names.has(c.column));
      if (missing) throw columnNotFound(missing.column, table);
      const store = this.metadataOf(tx);
      await store.set(
        [
          { target, provider, entries },
          ...columns.map((c) => ({ target: { ...target, column: c.column }, provider, entries: c.entries })),
        ],
        timestamp(this.now()),
        ids,
      );
      return store.ofTable(table.id);
    });
  }

  /** Deletes one metadata item of a bucket, table or column; an id the object does not have is MetadataNotFound. */
  async deleteMetadata(target: MetadataTargetId, metadataId: number): Promise<void> {
    await this.db.transaction(async (tx) => {
      const resolved = await this.resolve(new Catalog(tx, this.projectId, this.db.dialect.forUpdate), target);
      if (!(await this.metadataOf(tx).delete(resolved, metadataId)))
        throw new MetadataNotFound(
          `The supplied metadata ID was not found: the ${targetText(resolved)} has no metadata item ${metadataId} (GET its metadata lists the ids).`,
        );
    });
  }

  /** The first rows of a query (insertion order; 100 unless `limit` says otherwise, at most MAX_PREVIEW_ROWS). */
  async preview(tableId: string, query: TableQuery = {}): Promise<TablePreview> {
    const limit = query.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 0 || limit > MAX_PREVIEW_ROWS)
      throw new UserError(
        'GEX_TABLE_REQUEST_INVALID',
        `A preview's limit must be an integer from 0 to ${MAX_PREVIEW_ROWS}.`,
      );
    const rows: string[][] = [];
    const columns = await this.read(tableId, { ...query, limit }, async (batch) => void rows.push(...batch));
    return { columns, rows };
  }

  /**
   * Reads the rows of a query in insertion order, `onBatch` receiving up to EXPORT_BATCH_ROWS at a
   * time (awaited: a slow consumer slows the read, memory stays bounded) with the columns read, all
   * in one consistent snapshot. `batchRows`, when given, is asked before each batch how many rows
   * the next may hold (at least 1). Returns the columns read (user names).
   */
  async read(
    tableId: string,
    query: TableQuery,
    onBatch: (rows: string[][], columns: readonly string[]) => Promise<void>,
    options: { batchRows?: () => number } = {},
  ): Promise<string[]> {
    if (query.limit !== undefined && (!Number.isInteger(query.limit) || query.limit < 0))
      throw new UserError('GEX_TABLE_REQUEST_INVALID', 'A limit must be a whole number of rows.');
    return this.db.transaction(
      async (tx) => {
        const table = await this.existing(new Catalog(tx, this.projectId), tableId);
        const compiled = compileQuery(table, query, this.db.dialect);
        // the aliases once, not a new key string per value (a third of the time of a wide read)
        const keys = compiled.columns.map((_, i) => `c${i}`);
        await readPages(
          tx,
          this.db.dialect,
          compiled,
          query.limit ?? Number.POSITIVE_INFINITY,
          options.batchRows ?? EXPORT_BATCH_ROWS,
          (rows) =>
            onBatch(
              rows.map((r) => keys.map((key) => String(r[key]))),
              compiled.columns,
            ),
        );
        return compiled.columns;
      },
      { readOnly: true },
    );
  }

  async deleteTable(tableId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const catalog = new Catalog(tx, this.projectId, this.db.dialect.forUpdate);
      const table = await this.existing(catalog, tableId);
      await tx.run(`DROP TABLE ${qualifiedName(table)}`);
      await catalog.deleteTable(table.id);
      await this.metadataOf(tx).deleteTable(table.id);
    });
  }

  /** Deletes a bucket with all its tables; with `onlyEmpty`, a bucket that has tables is refused instead. */
  async deleteBucket(bucketId: string, options: { onlyEmpty?: boolean } = {}): Promise<void> {
    await this.db.transaction(async (tx) => {
      const catalog = new Catalog(tx, this.projectId, this.db.dialect.forUpdate);
      const bucket = await catalog.bucket(checkBucketId(bucketId));
      if (!bucket) throw bucketNotFound(bucketId);
      const tables = await catalog.tables(bucketId);
      if (options.onlyEmpty && tables.length > 0) {
        throw new BucketNotEmpty(
          `Only empty buckets can be deleted. There are ${tables.length} tables in bucket ${excerptId(bucketId)}; delete them first, or delete with force.`,
        );
      }
      for (const table of tables) {
        await tx.run(`DROP TABLE ${qualifiedName(table)}`);
        await catalog.deleteTable(table.id);
      }
      if (bucket.physicalSchema !== null) await tx.run(`DROP SCHEMA ${quoteIdentifier(bucket.physicalSchema)}`);
      await catalog.deleteBucket(bucketId);
      await this.metadataOf(tx).deleteBucket(bucketId);
    });
  }

  private metadataOf(tx: SqlExecutor): StorageMetadata {
    return new StorageMetadata(tx, this.projectId);
  }

  /**
   * The object a metadata call names, which must exist: a bucket, a table, or a column given as
   * `in.c-b.t.column` — a table name may hold dots, so each split is tried, the shortest table
   * name first, and the first table that has the column is the one.
   */
  private async resolve(catalog: Catalog, target: MetadataTargetId): Promise<MetadataTarget> {
    if ('bucketId' in target) {
      const bucket = await catalog.bucket(checkBucketId(target.bucketId));
      if (!bucket) throw bucketNotFound(target.bucketId);
      return { bucketId: bucket.id };
    }
    if ('tableId' in target) {
      const table = await this.existing(catalog, target.tableId);
      return { bucketId: table.id.bucketId, table: table.id.name };
    }
    const id = target.columnId;
    const { bucketId, name } = parseTableId(id, 'The column id');
    let firstTable: CatalogTable | undefined;
    for (let dot = name.indexOf('.'); dot > 0; dot = name.indexOf('.', dot + 1)) {
      const table = await catalog.table({ bucketId, name: name.slice(0, dot) });
      if (!table) continue;
      firstTable ??= table;
      const column = name.slice(dot + 1);
      if (table.columns.some((c) => c.name === column)) return { bucketId, table: table.id.name, column };
    }
    if (!firstTable)
      throw new TableNotFound(
        `Column ${excerptId(id)}: no table of it exists in this project (a column id is in.c-<bucket>.<table>.<column>).`,
      );
    throw columnNotFound(name.slice(firstTable.id.name.length + 1), firstTable);
  }

  private async existing(catalog: Catalog, tableId: string): Promise<CatalogTable> {
    const table = await catalog.table(parseTableId(tableId));
    if (!table) throw new TableNotFound(`Table ${excerptId(tableId)} does not exist in this project.`);
    return table;
  }
}

function bucketNotFound(bucketId: string): BucketNotFound {
  return new BucketNotFound(`Bucket ${excerptId(bucketId)} does not exist in this project.`);
}

function bucketInfo(b: CatalogBucket, metadata: readonly MetadataItem[] = []): BucketInfo {
  return {
    id: b.id,
    stage: b.id.startsWith('in.') ? 'in' : 'out',
    created: b.created,
    description: b.description,
    metadata,
  };
}

function columnNotFound(column: string, table: CatalogTable): ColumnNotFound {
  return new ColumnNotFound(
    `Column ${excerptId(column)} not found in table ${excerptId(tableIdText(table.id))} (its columns: ` +
      `${table.columns
        .slice(0, 20)
        .map((c) => excerptId(c.name))
        .join(', ')}${table.columns.length > 20 ? ', …' : ''}).`,
  );
}

/** Rows and bytes of a table (SQLite: its pages, read through dbstat; PostgreSQL: the relation with its indexes). */
async function tableStats(
  tx: Pick<Database, 'get'>,
  dialect: Dialect,
  table: CatalogTable,
): Promise<{ rows: number; bytes: number }> {
  const count = await tx.get<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${qualifiedName(table)}`);
  const size =
    dialect.name === 'sqlite'
      ? await tx.get<{ n: unknown }>("SELECT SUM(pgsize) AS n FROM dbstat('main', 1) WHERE name = ?", [
          table.physicalName,
        ])
      : await tx.get<{ n: unknown }>('SELECT pg_total_relation_size(?::regclass) AS n', [qualifiedName(table)]);
  return { rows: Number(count?.n ?? 0), bytes: Number(size?.n ?? 0) };
}

function detail(
  t: CatalogTable,
  stats: { rows: number; bytes: number },
  metadata: TableMetadata,
  withColumns: boolean,
): TableDetail {
  return {
    id: tableIdText(t.id),
    bucketId: t.id.bucketId,
    name: t.id.name,
    columns: t.columns.map((c) => c.name),
    primaryKey: [...t.primaryKey],
    rowsCount: stats.rows,
    dataSizeBytes: stats.bytes,
    created: t.created,
    lastImportDate: t.lastImportDate,
    lastChangeDate: t.lastChangeDate,
    metadata: metadata.metadata,
    // in the order of the table's columns
    columnMetadata: withColumns
      ? new Map(
          t.columns.flatMap((c) => (metadata.columns.has(c.name) ? [[c.name, metadata.columns.get(c.name)!]] : [])),
        )
      : null,
  };
}
