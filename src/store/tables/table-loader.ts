import { UserError } from '../../common/errors.js';
import { displayText, excerptId, excerptText } from '../../common/log-text.js';
import { timestamp } from '../identifiers.js';
import type { Dialect, TransactionExecutor } from '../sql/database.js';
import { Catalog, qualifiedName, type CatalogTable, type StoredColumn } from './catalog.js';
import { readCsvBatches, type CsvSource } from './csv-source.js';
import type { LoadManifest } from './manifest.js';
import { createBucket } from './bucket-creation.js';
import { physicalColumnName, physicalTableName, quoteIdentifier, TIMESTAMP_COLUMN } from './physical-names.js';
import { randomBytes } from 'node:crypto';
import { csvRecordText, rowWriter } from './row-writer.js';
import { tableIdText } from './table-id.js';
import { comparableValues } from './table-query.js';
import { checkProvider, SYSTEM_PROVIDER, type MetadataEntry } from './metadata-input.js';
import { StorageMetadata, type MetadataWrite } from './storage-metadata.js';

/** Rows read from the file at a time: one batch in memory; one COPY chunk or prepared loop each. */
const BATCH_ROWS = 1000;
/** Values of delete_where_values in one statement; more go through a temporary table. */
const WHERE_VALUES_PER_STATEMENT = 1000;

export interface LoadResult {
  readonly tableId: string;
  /** rows read from the file */
  readonly rowsInFile: number;
  readonly tableCreated: boolean;
  readonly columnsAdded: string[];
}

/**
 * Who loads: a run's output mapping of a component's configuration (and row). Keboola's output
 * mapping records it on the table as `system` metadata (`KBC.createdBy.*` when the load creates
 * the table or bucket, `KBC.lastUpdatedBy.*` on every load) and sets the manifest's metadata with
 * the component as provider. Without an origin (`gex tables import`, an import over HTTP) the
 * manifest's metadata is the `user`'s and no system metadata is set.
 */
export interface LoadOrigin {
  readonly componentId: string;
  readonly configurationId: string;
  readonly rowId: string | null;
}

/** The provider of a load's manifest metadata when no component loads. */
export const USER_PROVIDER = 'user';

export interface LoadInput {
  readonly file: CsvSource;
  /** the file as errors name it */
  readonly label: string;
  readonly manifest: LoadManifest;
  readonly now: Date;
  readonly origin?: LoadOrigin;
  /** ids reserved for the load's metadata: at least loadMetadataCount(manifest, origin) */
  readonly metadataIds: readonly number[];
}

/** The most metadata items a load may set: its system metadata (bucket and table created) and the manifest's. */
export function loadMetadataCount(manifest: LoadManifest, origin?: LoadOrigin): number {
  const system = origin ? 3 * systemMetadata(origin, 'createdBy').length : 0;
  return system + manifest.metadata.length + manifest.columnMetadata.reduce((n, c) => n + c.entries.length, 0);
}

/** Keboola's system metadata of a load: `KBC.<prefix>.component.id`, `.configuration.id`, `.configurationRow.id`. */
export function systemMetadata(origin: LoadOrigin, prefix: 'createdBy' | 'lastUpdatedBy'): MetadataEntry[] {
  const entries: MetadataEntry[] = [{ key: `KBC.${prefix}.component.id`, value: origin.componentId }];
  if (origin.configurationId) entries.push({ key: `KBC.${prefix}.configuration.id`, value: origin.configurationId });
  if (origin.rowId) entries.push({ key: `KBC.${prefix}.configurationRow.id`, value: origin.rowId });
  return entries;
}

const placeholders = (n: number): string => `(${Array.from({ length: n }, () => '?').join(', ')})`;

/**
 * Loads one CSV file into one Storage table inside the caller's transaction: creates the bucket
 * and table or adds the file's new columns, applies delete_where, then replaces, appends or
 * upserts the rows, streaming the file in batches into the database's bulk path (RowWriter).
 */
export class TableLoader {
  private readonly catalog: Catalog;
  private bucketCreated = false;

  constructor(
    private readonly tx: TransactionExecutor,
    private readonly dialect: Dialect,
    projectId: number,
  ) {
    this.catalog = new Catalog(tx, projectId, dialect.forUpdate);
    this.metadata = new StorageMetadata(tx, projectId);
  }

  private readonly metadata: StorageMetadata;

  async load(input: LoadInput): Promise<LoadResult> {
    const { manifest } = input;
    const tableId = tableIdText(manifest.destination);
    const now = timestamp(input.now);
    // a COPY reads `,` / `"` CSV itself: then records pass through as their text, checked, not split
    const passText = this.tx.copyFrom !== undefined && manifest.delimiter === ',' && manifest.enclosure === '"';
    const batches = readCsvBatches(
      input.file,
      {
        label: input.label,
        delimiter: manifest.delimiter,
        enclosure: manifest.enclosure,
        columns: manifest.columns,
        records: passText ? 'text' : 'values',
      },
      BATCH_ROWS,
    );
    try {
      const first = await batches.next();
      const fileColumns = (first.value as { columns: string[] }).columns;
      const existing = await this.catalog.table(manifest.destination);
      const table = existing ?? (await this.createTable(manifest, fileColumns, now));
      const columnsAdded = existing ? await this.addColumns(table, fileColumns) : [];
      const primaryKey = this.primaryKey(table, manifest, input.label);
      // a new table's key index is the writer's (on PostgreSQL built after the rows: one sort beats a million index inserts)
      if (primaryKey.length > 0 && existing && existing.primaryKey.length === 0)
        await this.indexPrimaryKey(table, primaryKey);
      table.primaryKey.splice(0, table.primaryKey.length, ...primaryKey);

      let changed = 0;
      if (!manifest.incremental) changed += (await this.tx.run(`DELETE FROM ${qualifiedName(table)}`)).changes;
      else if (manifest.deleteWhere && existing)
        changed += await this.deleteWhere(table, manifest.deleteWhere, input.label);
      const tableState = !existing ? 'new' : manifest.incremental ? 'filled' : 'empty';

      const physical = new Map(table.columns.map((c) => [c.name, c.physical]));
      const missingKey = primaryKey.find((k) => !fileColumns.includes(k));
      if (missingKey !== undefined)
        throw new UserError(
          'GEX_TABLE_LOAD_REFUSED',
          `${displayText(input.label)}: the file has no column ${excerptId(missingKey)} of the table's primary key.`,
        );
      const writer = rowWriter(this.tx, {
        table: qualifiedName(table),
        columns: fileColumns.map((name) => physical.get(name)!),
        now,
        keyIndexName: keyIndexName(),
      });
      const physicalKey = primaryKey.map((k) => physical.get(k)!);
      let rowsInFile = 0;
      async function* rows<T>(take: (batch: { rows: string[][] } | { texts: string[] }) => T[]): AsyncGenerator<T[]> {
        for (let next = await batches.next(); !next.done; next = await batches.next()) {
          const batch = take(next.value as { rows: string[][] } | { texts: string[] });
          rowsInFile += batch.length;
          yield batch;
        }
      }
      // a full load is deduplicated by the key too: the table ends with one row per key either way
      if (writer.takes === 'csv') {
        const texts = rows((b) => ('texts' in b ? b.texts : b.rows.map(csvRecordText)));
        changed +=
          primaryKey.length > 0
            ? await writer.writer.upsert(texts, physicalKey, tableState)
            : await writer.writer.append(texts);
      } else {
        const values = rows((b) => ('rows' in b ? b.rows : []));
        changed +=
          primaryKey.length > 0
            ? await writer.writer.upsert(values, physicalKey, tableState)
            : await writer.writer.append(values);
      }
      await this.catalog.saveTable(
        { ...table, lastImportDate: now, lastChangeDate: changed > 0 || !existing ? now : table.lastChangeDate },
        !existing,
      );
      // in the load's transaction: a refused item leaves rows, columns and metadata as they were
      await this.metadata.set(this.metadataWrites(table, input, !existing), now, input.metadataIds);
      return { tableId, rowsInFile, tableCreated: !existing, columnsAdded };
    } finally {
      await batches.return(undefined);
    }
  }

  /** The system metadata of the load (with an origin) and the manifest's, as one write. */
  private metadataWrites(table: CatalogTable, input: LoadInput, created: boolean): MetadataWrite[] {
    const { bucketId, name } = table.id;
    const { manifest, origin, label } = input;
    const writes: MetadataWrite[] = [];
    if (origin) {
      if (this.bucketCreated)
        writes.push({ target: { bucketId }, provider: SYSTEM_PROVIDER, entries: systemMetadata(origin, 'createdBy') });
      if (created)
        writes.push({
          target: { bucketId, table: name },
          provider: SYSTEM_PROVIDER,
          entries: systemMetadata(origin, 'createdBy'),
        });
      writes.push({
        target: { bucketId, table: name },
        provider: SYSTEM_PROVIDER,
        entries: systemMetadata(origin, 'lastUpdatedBy'),
      });
    }
    if (manifest.metadata.length === 0 && manifest.columnMetadata.length === 0) return writes;
    const provider = origin
      ? checkProvider(origin.componentId, `${displayText(label)}: the component id as the metadata's provider`)
      : USER_PROVIDER;
    if (manifest.metadata.length > 0)
      writes.push({ target: { bucketId, table: name }, provider, entries: manifest.metadata });
    const columns = new Set(table.columns.map((c) => c.name));
    for (const { column, entries } of manifest.columnMetadata) {
      if (!columns.has(column))
        throw new UserError(
          'GEX_TABLE_LOAD_REFUSED',
          `${displayText(label)}: column_metadata names the column ${excerptId(column)}, which table ${excerptId(tableIdText(table.id))} does not have ` +
            `(its columns: ${table.columns
              .slice(0, 20)
              .map((c) => excerptId(c.name))
              .join(', ')}${table.columns.length > 20 ? ', …' : ''}); the table is unchanged.`,
        );
      writes.push({ target: { bucketId, table: name, column }, provider, entries });
    }
    return writes;
  }

  private async createTable(manifest: LoadManifest, columns: string[], now: string): Promise<CatalogTable> {
    let bucket = await this.catalog.bucket(manifest.destination.bucketId);
    if (!bucket) {
      bucket = await createBucket(this.tx, this.dialect, this.catalog, {
        id: manifest.destination.bucketId,
        created: now,
      });
      this.bucketCreated = true;
    }
    const stored: StoredColumn[] = [];
    const taken = new Set<string>();
    for (const name of columns) {
      const physical = physicalColumnName(this.dialect, name, stored.length, taken);
      stored.push({ name, physical });
      taken.add(physical);
    }
    const siblings = new Set((await this.catalog.tables(bucket.id)).map((t) => t.physicalName));
    let physicalName = physicalTableName(this.dialect, manifest.destination.name);
    // a name cut to 63 bytes may meet another's; the metadata keeps whatever name was chosen
    while (siblings.has(physicalName))
      physicalName = physicalTableName(this.dialect, `${manifest.destination.name}~${randomBytes(3).toString('hex')}`);
    const table: CatalogTable = {
      projectId: 0,
      id: manifest.destination,
      physicalName,
      physicalSchema: bucket.physicalSchema,
      columns: stored,
      primaryKey: [],
      created: now,
      lastImportDate: now,
      lastChangeDate: null,
    };
    const definitions = [
      ...stored.map((c) => `${quoteIdentifier(c.physical)} TEXT NOT NULL DEFAULT ''`),
      `${quoteIdentifier(TIMESTAMP_COLUMN)} TEXT NOT NULL`,
    ];
    await this.tx.run(`CREATE TABLE ${qualifiedName(table)} (${definitions.join(', ')})`);
    return table;
  }

  /** Adds the file's columns the table lacks; existing rows get an empty string in them. */
  private async addColumns(table: CatalogTable, fileColumns: string[]): Promise<string[]> {
    const known = new Set(table.columns.map((c) => c.name));
    const added = fileColumns.filter((name) => !known.has(name));
    if (table.columns.length + added.length > 1000)
      throw new UserError(
        'GEX_TABLE_LOAD_REFUSED',
        `Table ${excerptId(tableIdText(table.id))} would have more than 1000 columns.`,
      );
    const taken = new Set(table.columns.map((c) => c.physical));
    for (const name of added) {
      const column = { name, physical: physicalColumnName(this.dialect, name, table.columns.length, taken) };
      table.columns.push(column);
      taken.add(column.physical);
      await this.tx.run(
        `ALTER TABLE ${qualifiedName(table)} ADD COLUMN ${quoteIdentifier(column.physical)} TEXT NOT NULL DEFAULT ''`,
      );
    }
    return added;
  }

  /** The table's key: the stored one; the manifest's for a table without one; they must agree. */
  private primaryKey(table: CatalogTable, manifest: LoadManifest, label: string): string[] {
    const stored = table.primaryKey;
    const wanted = manifest.primaryKey;
    if (stored.length > 0 && wanted.length > 0 && JSON.stringify(stored) !== JSON.stringify(wanted)) {
      throw new UserError(
        'GEX_TABLE_LOAD_REFUSED',
        `${displayText(label)}: primary_key ${excerptText(JSON.stringify(wanted))} differs from the key of table ` +
          `${excerptId(tableIdText(table.id))}, ${excerptText(JSON.stringify(stored))}; use the table's key or delete the table first.`,
      );
    }
    const key = stored.length > 0 ? [...stored] : [...wanted];
    const names = new Set(table.columns.map((c) => c.name));
    for (const column of key) {
      if (!names.has(column))
        throw new UserError(
          'GEX_TABLE_LOAD_REFUSED',
          `${displayText(label)}: primary key column ${excerptId(column)} is not a column of the table.`,
        );
    }
    if (new Set(key).size !== key.length)
      throw new UserError('GEX_TABLE_LOAD_REFUSED', `${displayText(label)}: primary_key names a column twice.`);
    return key;
  }

  private async indexPrimaryKey(table: CatalogTable, key: string[]): Promise<void> {
    const physical = key.map((k) => quoteIdentifier(table.columns.find((c) => c.name === k)!.physical));
    await this.tx.run(
      `CREATE INDEX ${quoteIdentifier(keyIndexName())} ON ${qualifiedName(table)} (${physical.join(', ')})`,
    );
  }

  private async deleteWhere(
    table: CatalogTable,
    where: NonNullable<LoadManifest['deleteWhere']>,
    label: string,
  ): Promise<number> {
    const column = table.columns.find((c) => c.name === where.column);
    if (!column)
      throw new UserError(
        'GEX_TABLE_LOAD_REFUSED',
        `${displayText(label)}: delete_where_column ${excerptId(where.column)} is not a column of table ${excerptId(tableIdText(table.id))}.`,
      );
    if (where.values.length === 0)
      throw new UserError(
        'GEX_TABLE_LOAD_REFUSED',
        `${displayText(label)}: delete_where_values is empty; list the values whose rows to delete.`,
      );
    // a value with NUL is in no row: `eq` deletes nothing for it, `ne` keeps no row for it
    const comparable = comparableValues(where.values);
    if (comparable.length === 0)
      return where.operator === 'eq' ? 0 : (await this.tx.run(`DELETE FROM ${qualifiedName(table)}`)).changes;
    const condition = `${quoteIdentifier(column.physical)} ${where.operator === 'eq' ? 'IN' : 'NOT IN'}`;
    if (comparable.length <= WHERE_VALUES_PER_STATEMENT) {
      return (
        await this.tx.run(
          `DELETE FROM ${qualifiedName(table)} WHERE ${condition} ${placeholders(comparable.length)}`,
          comparable,
        )
      ).changes;
    }
    // more values than one statement's parameters take: a temporary table of them, filled in chunks
    const values = quoteIdentifier(`gex_values_${randomBytes(8).toString('hex')}`);
    await this.tx.run(`CREATE TEMPORARY TABLE ${values} (v TEXT NOT NULL)`);
    for (let i = 0; i < comparable.length; i += WHERE_VALUES_PER_STATEMENT) {
      const chunk = comparable.slice(i, i + WHERE_VALUES_PER_STATEMENT);
      await this.tx.run(`INSERT INTO ${values} (v) VALUES ${chunk.map(() => '(?)').join(', ')}`, chunk);
    }
    const deleted = await this.tx.run(
      `DELETE FROM ${qualifiedName(table)} WHERE ${condition} (SELECT v FROM ${values})`,
    );
    await this.tx.run(`DROP TABLE ${values}`);
    return deleted.changes;
  }
}

const keyIndexName = (): string => `gex_key_${randomBytes(8).toString('hex')}`;
