import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { UserError } from '../../common/errors.js';
import { excerptId, excerptList } from '../../common/log-text.js';
import type { ProjectFiles, StoredFile } from '../../store/files/project-files.js';
import { streamCsv } from '../../store/table-csv.js';
import { embeddedTableSource } from '../../store/table-source.js';
import { readCsvHeader, type CsvSource, type ProjectTables, type TableQuery } from '../../store/tables/index.js';
import type { StorageJobOutcome } from './storage-job-runner.js';

/**
 * The work of the File Storage jobs (docs/storage-api.md#jobs): a stored file is loaded as `gex run`
 * loads a table (ProjectTables.load: one transaction, the table as it was when anything fails),
 * read straight from its stored chunks on PostgreSQL, copied to a temporary file first on SQLite
 * (whose one connection is the load's until it ends); an export writes the table's CSV to a
 * temporary file and stores it as a new file. Memory stays bounded whatever the sizes.
 */

export interface ImportInput {
  tableId: string;
  file: StoredFile;
  /** Keboola's load manifest, without `columns` (given here) */
  manifest: Record<string, unknown>;
  /** the file's columns when it has no header row; else the header they must match, when given */
  columns: readonly string[] | null;
  withoutHeaders: boolean;
  /** the key the import asks for: must be the table's (import-async) */
  primaryKey?: readonly string[];
  /** the table must not exist yet (tables-async) */
  create: boolean;
}

const keyText = (key: readonly string[]): string => (key.length === 0 ? '(none)' : excerptList(key));

function fileLabel(file: StoredFile): string {
  return `File ${file.id} (${excerptId(file.name)})`;
}

async function withTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'gex-storage-job-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `work` given the file's CSV: its stored chunks as they are read, or a temporary copy where they cannot be. */
async function withCsv<T>(files: ProjectFiles, file: StoredFile, work: (csv: CsvSource) => Promise<T>): Promise<T> {
  if (files.readableInTransactions) return work(() => files.content(file));
  return withTempDir(async (dir) => {
    const csv = path.join(dir, `file-${file.id}.csv`);
    await pipeline(files.content(file), createWriteStream(csv, { flags: 'wx' }));
    return work(csv);
  });
}

async function tableExists(tables: ProjectTables, tableId: string): Promise<boolean> {
  try {
    await tables.table(tableId);
    return true;
  } catch (error) {
    if (error instanceof UserError && error.gexCode === 'GEX_TABLE_NOT_FOUND') return false;
    throw error;
  }
}

/** Loads a stored file into a table (create or import); the results Keboola's job reports. */
export async function importFile(
  tables: ProjectTables,
  files: ProjectFiles,
  input: ImportInput,
): Promise<StorageJobOutcome> {
  const { tableId, file } = input;
  if (input.create && (await tableExists(tables, tableId)))
    throw new UserError(
      'GEX_TABLE_LOAD_REFUSED',
      `Table ${excerptId(tableId)} already exists; import into it instead.`,
    );
  // a table without a key takes the import's key, as a load into the embedded store does
  let newKey: readonly string[] = [];
  if (!input.create && input.primaryKey !== undefined) {
    const table = await tables.table(tableId);
    if (table.primaryKey.length === 0) newKey = input.primaryKey;
    else if (JSON.stringify(table.primaryKey) !== JSON.stringify(input.primaryKey))
      throw new UserError(
        'GEX_TABLE_LOAD_REFUSED',
        `The table ${excerptId(tableId)} has primary key ${keyText(table.primaryKey)}; the import asks for key ${keyText(input.primaryKey)}.`,
      );
  }
  return withCsv(files, file, async (csv) => {
    const delimiter = typeof input.manifest.delimiter === 'string' ? input.manifest.delimiter : ',';
    const enclosure = typeof input.manifest.enclosure === 'string' ? input.manifest.enclosure : '"';
    let imported = input.columns ? [...input.columns] : null;
    if (!input.withoutHeaders) {
      const header = await readCsvHeader(csv, { label: `file-${file.id}.csv`, delimiter, enclosure });
      if (imported && (imported.length !== header.length || imported.some((c, i) => c !== header[i])))
        throw new UserError(
          'GEX_TABLE_LOAD_REFUSED',
          `${fileLabel(file)} has the header ${excerptList(header)}; the import into table ${excerptId(tableId)} names the columns ${excerptList(imported)}.`,
        );
      imported = header;
    } else if (!imported || imported.length === 0) {
      throw new UserError(
        'GEX_TABLE_LOAD_REFUSED',
        `${fileLabel(file)} has no header row (withoutHeaders): name its columns in columns[] for table ${excerptId(tableId)}.`,
      );
    }
    const manifest = {
      ...input.manifest,
      destination: tableId,
      ...(input.withoutHeaders ? { columns: imported } : {}),
      ...(newKey.length > 0 ? { primary_key: [...newKey] } : {}),
    };
    const loaded = await tables.loadFrom(csv, `file-${file.id}.csv`, manifest);
    const table = await tables.table(tableId);
    return {
      results: {
        ...(input.create ? { id: tableId } : {}),
        importedColumns: imported,
        warnings: [],
        transaction: null,
        totalRowsCount: table.rowsCount,
        totalDataSizeBytes: table.dataSizeBytes,
        newColumns: loaded.columnsAdded,
      },
      metrics: { inBytes: file.sizeBytes ?? 0 },
    };
  });
}

export interface ExportInput {
  tableId: string;
  query: TableQuery;
  gzip: boolean;
  token: { id: number; description: string };
  /** largest file stored */
  limit: number;
}

/** Exports a table's rows as Keboola's CSV to a new file (gzipped if asked); results `{file: {id}}`. */
export async function exportToFile(
  tables: ProjectTables,
  files: ProjectFiles,
  input: ExportInput,
): Promise<StorageJobOutcome> {
  return withTempDir(async (dir) => {
    const csv = path.join(dir, 'export.csv');
    const out = createWriteStream(csv, { flags: 'wx' });
    const failed = new Promise<never>((_, reject) => out.once('error', reject));
    failed.catch(() => undefined);
    await Promise.race([streamCsv(embeddedTableSource(tables), input.tableId, input.query, out), failed]);
    await new Promise<void>((resolve, reject) =>
      out.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
    const name = `${input.tableId}.csv${input.gzip ? '.gz' : ''}`;
    const file = await files.prepare({ name, token: input.token, tags: ['table-export'] });
    try {
      const source = createReadStream(csv);
      const stored = await files.upload(file.id, input.gzip ? source.pipe(createGzip()) : source, input.limit);
      return {
        results: { file: { id: stored.id } },
        metrics: { outBytes: stored.sizeBytes ?? 0, inBytes: (await stat(csv)).size },
      };
    } catch (error) {
      await files.delete(file.id).catch(() => undefined);
      if (error instanceof UserError) throw error;
      throw new Error(`The export of ${excerptId(input.tableId)} could not be stored: ${(error as Error).message}`, {
        cause: error,
      });
    }
  });
}
