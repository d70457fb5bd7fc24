import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../../common/errors.js';
import { displayText, excerptId, excerptQuoted } from '../../common/log-text.js';
import {
  checkColumnMetadata,
  checkMetadataList,
  type ColumnMetadataInput,
  type MetadataEntry,
} from './metadata-input.js';
import { parseTableId, type TableId } from './table-id.js';

/** What a table's `.manifest` asks of a load (Keboola's output mapping), checked. */
export interface LoadManifest {
  readonly destination: TableId;
  readonly incremental: boolean;
  readonly primaryKey: readonly string[];
  /** the columns of a headless CSV file (no header row); null when the file has a header */
  readonly columns: readonly string[] | null;
  readonly deleteWhere: { column: string; values: readonly string[]; operator: 'eq' | 'ne' } | null;
  readonly delimiter: string;
  readonly enclosure: string;
  /** the table's metadata to set (`metadata`, then `table_metadata`), by the loading component */
  readonly metadata: readonly MetadataEntry[];
  /** its columns' (`column_metadata`) */
  readonly columnMetadata: readonly ColumnMetadataInput[];
}

/** More than this many values in delete_where_values is refused (all are held in memory). */
export const MAX_DELETE_WHERE_VALUES = 100_000;

function stringList(value: unknown, where: string): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw new UserError('GEX_TABLE_LOAD_REFUSED', `${where} must be a list of strings.`);
  }
  return value;
}

function oneCharacter(value: unknown, fallback: string, where: string): string {
  if (value === undefined || value === null) return fallback;
  // one UTF-16 code unit: the CSV scanner compares code units (an emoji delimiter is refused)
  if (typeof value !== 'string' || value.length !== 1 || value === '\n' || value === '\r') {
    throw new UserError(
      'GEX_TABLE_LOAD_REFUSED',
      `${where} must be one character (not a line break, not an emoji), not ${excerptQuoted(String(value))}.`,
    );
  }
  return value;
}

/**
 * Checks a parsed manifest. `source` names the manifest in errors (e.g. its file name);
 * `defaultDestination` is used when the manifest has none (Keboola derives it from the file name).
 */
export function parseLoadManifest(manifest: unknown, source: string, defaultDestination?: string): LoadManifest {
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest)) {
    throw new UserError('GEX_TABLE_LOAD_REFUSED', `${source}: a manifest must be a JSON object.`);
  }
  const m = manifest as Record<string, unknown>;
  const destination = parseTableId(m.destination ?? defaultDestination, `${source}: destination`);
  if (m.incremental !== undefined && typeof m.incremental !== 'boolean')
    throw new UserError('GEX_TABLE_LOAD_REFUSED', `${source}: incremental must be true or false.`);
  const primaryKey = m.primary_key === undefined ? [] : stringList(m.primary_key, `${source}: primary_key`);
  const columns =
    m.columns === undefined || (Array.isArray(m.columns) && m.columns.length === 0)
      ? null
      : stringList(m.columns, `${source}: columns`);
  let deleteWhere: LoadManifest['deleteWhere'] = null;
  if (m.delete_where_column !== undefined && m.delete_where_column !== '') {
    if (typeof m.delete_where_column !== 'string')
      throw new UserError('GEX_TABLE_LOAD_REFUSED', `${source}: delete_where_column must be a column name.`);
    const values = stringList(m.delete_where_values ?? [], `${source}: delete_where_values`);
    if (values.length > MAX_DELETE_WHERE_VALUES)
      throw new UserError(
        'GEX_TABLE_LOAD_REFUSED',
        `${source}: delete_where_values has ${values.length} values, more than the ${MAX_DELETE_WHERE_VALUES} a load takes; ` +
          `delete in several incremental loads, or replace the table with a full load.`,
      );
    const operator = m.delete_where_operator ?? 'eq';
    if (operator !== 'eq' && operator !== 'ne') {
      throw new UserError(
        'GEX_TABLE_LOAD_REFUSED',
        `${source}: delete_where_operator must be "eq" or "ne", not ${excerptId(String(operator))}.`,
      );
    }
    deleteWhere = { column: m.delete_where_column, values, operator };
  }
  const delimiter = oneCharacter(m.delimiter, ',', `${source}: delimiter`);
  const enclosure = oneCharacter(m.enclosure, '"', `${source}: enclosure`);
  if (delimiter === enclosure)
    throw new UserError(
      'GEX_TABLE_LOAD_REFUSED',
      `${source}: delimiter and enclosure are both ${excerptQuoted(delimiter)}; they must differ.`,
    );
  return {
    destination,
    incremental: m.incremental === true,
    primaryKey,
    columns,
    deleteWhere,
    delimiter,
    enclosure,
    ...manifestMetadata(m, source),
  };
}

/**
 * `metadata` (a list of {key, value}), `table_metadata` (Keboola's newer form: an object of key →
 * value) and `column_metadata` (column → list); absent or null is none.
 */
function manifestMetadata(
  m: Record<string, unknown>,
  source: string,
): { metadata: MetadataEntry[]; columnMetadata: ColumnMetadataInput[] } {
  const list = m.metadata === undefined || m.metadata === null ? [] : m.metadata;
  const more = m.table_metadata;
  let pairs: unknown[] = [];
  if (more !== undefined && more !== null) {
    if (typeof more !== 'object' || Array.isArray(more)) {
      if (!(Array.isArray(more) && more.length === 0))
        throw new UserError('GEX_METADATA_INVALID', `${source}: table_metadata must be an object of key → value.`);
    } else pairs = Object.entries(more).map(([key, value]) => ({ key, value }));
  }
  const byKey = new Map<string, string>();
  for (const e of checkMetadataList(list, 'metadata', source)) byKey.set(e.key, e.value);
  for (const e of checkMetadataList(pairs, 'table_metadata', source)) byKey.set(e.key, e.value);
  const metadata = [...byKey].map(([key, value]) => ({ key, value }));
  const columns = m.column_metadata;
  const columnMetadata =
    columns === undefined || columns === null || (Array.isArray(columns) && columns.length === 0)
      ? []
      : checkColumnMetadata(columns, 'column_metadata', source);
  return { metadata, columnMetadata };
}

/** Largest manifest file read (a manifest is a few hundred bytes; this bounds a hostile one). */
const MAX_MANIFEST_BYTES = 1024 * 1024;

/** A manifest file's JSON; an absent file is an empty manifest. */
export async function readManifest(file: string): Promise<unknown> {
  let text: string;
  try {
    const data = await readFile(file);
    if (data.length > MAX_MANIFEST_BYTES)
      throw new UserError(
        'GEX_TABLE_LOAD_REFUSED',
        `${displayText(path.basename(file))} is larger than ${MAX_MANIFEST_BYTES} bytes.`,
      );
    text = data.toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UserError(
      'GEX_TABLE_LOAD_REFUSED',
      `${displayText(path.basename(file))} is not valid JSON: ${(error as Error).message}`,
    );
  }
}
