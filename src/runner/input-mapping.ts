import type { FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { UserError } from '../common/errors.js';
import { displayId, excerptQuoted } from '../common/log-text.js';
import { resolveInside, unsafeFileNameProblem } from '../common/safe-path.js';
import { toPlain, type JsonObject } from '../json/index.js';
import type { DataFolder } from '../extractor/data-folder.js';
import type { TableTransfer } from '../store/remote/table-transfer.js';
import type { TableSource } from '../store/table-source.js';
import { parseChangedSince } from '../store/tables/moments.js';
import type { ProjectTables } from '../store/tables/project-tables.js';
import type { TableDetail } from '../store/tables/table-shapes.js';
import type { MetadataItem } from '../store/tables/metadata-input.js';
import { parseTableId, tableIdText } from '../store/tables/table-id.js';
import type { TableQuery } from '../store/tables/table-query.js';

/** One table of a row's input mapping (`storage.input.tables[i]`), checked. */
export interface InputTable {
  /** where it is in the configuration, for errors: `storage.input.tables[0]` */
  readonly where: string;
  readonly source: string;
  /** the file name in in/tables */
  readonly destination: string;
  readonly query: TableQuery;
}

/** A table exported into in/tables. */
export interface ExportedTable {
  source: string;
  /** relative to the unit's folder: `in/tables/<destination>` */
  file: string;
  rows: number;
  /** the CSV file's size in bytes */
  bytes: number;
}

/** Most input tables of one row: each is a file and a query. */
export const MAX_INPUT_TABLES = 1000;

/** Keboola's CSV: every value quoted, header first, LF line ends. */
const DIALECT = { quoted: true, quoted_empty: true, record_delimiter: 'unix' } as const;

/** Names and characters a destination may not have beyond what a file name forbids. */
const UNSAFE_CHARACTER = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/**
 * Reads `storage.input.tables` of a unit's configuration (Keboola's input mapping): `source`,
 * `destination` (a file name in in/tables; the source table id when absent, as Keboola names it,
 * without adding `.csv`), `columns`, `where_column`, `where_values`, `where_operator`,
 * `changed_since` (or the older `days`) and `limit`. Other keys (column_types, …) are ignored, as
 * a component ignores what it does not use. `unit` names the row in errors.
 */
export function parseInputTables(storage: JsonObject, unit: string, now: Date): InputTable[] {
  const input = toPlain(storage.get('input') ?? null);
  const list = isObject(input) ? input.tables : undefined;
  if (list === undefined || list === null) return [];
  const fail = (where: string, problem: string): never => {
    throw new UserError('GEX_INPUT_MAPPING_INVALID', `${unit}: ${where} ${problem}.`);
  };
  if (!Array.isArray(list)) fail('storage.input.tables', 'must be a list of tables');
  const tables = list as unknown[];
  if (tables.length > MAX_INPUT_TABLES)
    fail('storage.input.tables', `lists ${tables.length} tables, more than the ${MAX_INPUT_TABLES} a row may read`);
  const destinations = new Map<string, string>();
  return tables.map((entry, i) => {
    const where = `storage.input.tables[${i}]`;
    if (!isObject(entry)) return fail(where, 'must be an object with at least "source"');
    if (typeof entry.source !== 'string')
      return fail(`${where}.source`, 'must be a table id such as "in.c-shop.users"');
    const source = tableIdText(parseTableId(entry.source, `${unit}: ${where}.source`));
    const destination = entry.destination === undefined || entry.destination === null ? source : entry.destination;
    if (typeof destination !== 'string') return fail(`${where}.destination`, 'must be a file name such as "users.csv"');
    const problem =
      unsafeFileNameProblem(destination) ??
      (UNSAFE_CHARACTER.test(destination) ? 'contains a control or invisible character' : null) ??
      (destination.endsWith('.manifest') ? "ends in .manifest, the name of a table's manifest" : null);
    if (problem)
      fail(
        `${where}.destination ${excerptQuoted(destination, 300)}`,
        `${problem}; name a file in in/tables, such as "users.csv"`,
      );
    const other = destinations.get(destination);
    if (other !== undefined)
      fail(
        `${where}.destination ${displayId(destination)}`,
        `is also the destination of ${other}; give each table its own file`,
      );
    destinations.set(destination, where);
    return {
      where,
      source,
      destination,
      query: parseQuery(entry, where, now, fail, `${unit}, input table ${displayId(source)}`),
    };
  });
}

function parseQuery(
  entry: Record<string, unknown>,
  where: string,
  now: Date,
  fail: (where: string, problem: string) => never,
  table: string,
): TableQuery {
  const strings = (key: string): string[] | undefined => {
    const value = entry[key];
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
      return fail(`${where}.${key}`, 'must be a list of strings');
    return value;
  };
  const whereColumn = entry.where_column;
  if (whereColumn !== undefined && whereColumn !== null && typeof whereColumn !== 'string')
    fail(`${where}.where_column`, 'must be a column name');
  const operator = entry.where_operator ?? 'eq';
  if (operator !== 'eq' && operator !== 'ne')
    fail(`${where}.where_operator`, `must be "eq" or "ne", not ${excerptQuoted(String(operator))}`);
  const limit = entry.limit;
  if (limit !== undefined && limit !== null && !(Number.isInteger(limit) && (limit as number) >= 0))
    fail(`${where}.limit`, 'must be a whole number of rows');
  return {
    columns: strings('columns'),
    whereColumn: typeof whereColumn === 'string' && whereColumn !== '' ? whereColumn : undefined,
    whereValues: strings('where_values'),
    whereOperator: operator,
    changedSince: changedSince(entry, where, now, fail, table),
    limit: typeof limit === 'number' ? limit : undefined,
  };
}

/** `table` names the row and the source table in an error of the value. */
function changedSince(
  entry: Record<string, unknown>,
  where: string,
  now: Date,
  fail: (where: string, problem: string) => never,
  table: string,
): Date | undefined {
  const value = entry.changed_since;
  if (value !== undefined && value !== null && value !== '') {
    if (value === 'adaptive') {
      return fail(
        `${where}.changed_since`,
        'is "adaptive", which gex does not support (it needs the last import of each table kept in the state); give a moment such as "-2 days" or 2025-01-31',
      );
    }
    if (typeof value !== 'string' && typeof value !== 'number')
      return fail(`${where}.changed_since`, 'must be a moment such as "-2 days"');
    try {
      return parseChangedSince(String(value), now, `${where}.changed_since`);
    } catch (error) {
      if (error instanceof UserError) throw new UserError('GEX_INPUT_MAPPING_INVALID', `${table}: ${error.message}`);
      throw error;
    }
  }
  // Keboola's older `days`: rows changed in the last N days
  const days = entry.days;
  if (days === undefined || days === null || days === '' || days === 0 || days === '0') return undefined;
  if (!/^\d{1,6}$/.test(String(days))) return fail(`${where}.days`, 'must be a whole number of days');
  return new Date(now.getTime() - Number(days) * 86_400_000);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Where a run reads its input tables: the embedded store's tables (read in bounded batches), or a
 * gex server's (an export job's file, downloaded streamed). Either writes Keboola's CSV.
 */
export interface InputTableReader {
  table(tableId: string): Promise<TableDetail>;
  /** The query's rows as Keboola's CSV, header first, into `out`; returns the rows and the columns read. */
  writeCsv(
    tableId: string,
    query: TableQuery,
    header: string[],
    out: FileHandle,
  ): Promise<{ rows: number; columns: string[] }>;
}

/** The embedded store's tables as an InputTableReader. */
export function embeddedInputTables(tables: ProjectTables): InputTableReader {
  return {
    table: (tableId) => tables.table(tableId),
    async writeCsv(tableId, query, header, out) {
      let rows = 0;
      await out.write(stringify([header], DIALECT));
      const columns = await tables.read(tableId, query, async (batch) => {
        rows += batch.length;
        await out.write(stringify(batch, DIALECT));
      });
      return { rows, columns };
    },
  };
}

/** A gex server's tables as an InputTableReader: export-async writes a file, downloaded streamed. */
export function remoteInputTables(source: TableSource, transfer: TableTransfer): InputTableReader {
  return {
    table: (tableId) => source.table(tableId),
    async writeCsv(tableId, query, header, out) {
      // each chunk written through the handle, which stays open (exportInputTables closes it)
      const stream = new Writable({
        write: (chunk: Buffer, _encoding, callback) =>
          void out.write(chunk).then(
            () => callback(),
            (error: Error) => callback(error),
          ),
      });
      const finished = new Promise<void>((resolve, reject) => {
        stream.once('finish', resolve);
        stream.once('error', reject);
      });
      const { rows } = await transfer.exportTable(tableId, query, stream);
      stream.end();
      await finished;
      return { rows, columns: header };
    },
  };
}

/**
 * Exports each input table into `in/tables/<destination>` (streamed in bounded batches, one
 * snapshot per table) with Keboola's input manifest beside it. `unit` names the row in errors.
 */
export async function exportInputTables(
  tables: InputTableReader,
  inputs: readonly InputTable[],
  data: DataFolder,
  unit: string,
): Promise<ExportedTable[]> {
  const exported: ExportedTable[] = [];
  for (const input of inputs) {
    let detail: TableDetail;
    try {
      detail = await tables.table(input.source);
    } catch (error) {
      if (error instanceof UserError && /NOT_FOUND$/.test(error.gexCode)) {
        throw new UserError(
          'GEX_INPUT_MAPPING_INVALID',
          `${unit}: ${input.where}.source: table ${displayId(input.source)} does not exist in this project. Load it first (an earlier row's output), or fix the source.`,
          { cause: error },
        );
      }
      throw error;
    }
    const file = resolveInside(data.inputTablesDir, input.destination);
    // the columns read: the query's, else the table's (read() checks them against the table)
    const header = input.query.columns && input.query.columns.length > 0 ? [...input.query.columns] : detail.columns;
    let written: { rows: number; columns: string[] };
    let bytes: number;
    // created new: nothing planted at the name (a link) is written through
    const handle = await data.guard.createFile(file);
    try {
      written = await tables.writeCsv(input.source, input.query, header, handle);
      bytes = (await handle.stat()).size;
    } catch (error) {
      if (error instanceof UserError)
        throw new UserError(
          error.gexCode,
          `${unit}: ${input.where} (table ${displayId(input.source)}): ${error.message}`,
          { cause: error },
        );
      throw error;
    } finally {
      await handle.close();
    }
    await data.guard.writeFile(
      `${file}.manifest`,
      `${JSON.stringify(inputManifest(detail, written.columns), null, 2)}\n`,
    );
    exported.push({ source: input.source, file: `in/tables/${input.destination}`, rows: written.rows, bytes });
  }
  return exported;
}

/** Keboola's in/tables manifest of an exported table. */
function inputManifest(detail: TableDetail, columns: string[]): Record<string, unknown> {
  return {
    id: detail.id,
    name: detail.name,
    primary_key: detail.primaryKey,
    created: detail.created,
    last_import_date: detail.lastImportDate,
    last_change_date: detail.lastChangeDate,
    rows_count: detail.rowsCount,
    columns,
    metadata: detail.metadata.map(storageMetadataItem),
    // every exported column, with its metadata ([] for none), in the file's order
    column_metadata: Object.fromEntries(
      columns.map((c) => [c, (detail.columnMetadata?.get(c) ?? []).map(storageMetadataItem)]),
    ),
  };
}

/** A metadata item as Keboola's input manifest lists it. */
function storageMetadataItem(m: MetadataItem): Record<string, string> {
  return { id: m.id, key: m.key, value: m.value, provider: m.provider, timestamp: m.timestamp };
}

/** How a unit is named in input-mapping errors. */
export function unitName(rowId: string | null): string {
  return rowId === null ? 'The configuration' : `Row ${displayId(rowId)}`;
}
