import { UserError } from '../common/errors.js';
import { displayText, excerptId, quoteForLog } from '../common/log-text.js';
import { unsafeFileNameProblem } from '../common/safe-path.js';
import { toPlain, type JsonObject } from '../json/index.js';
import { parseLoadManifest } from '../store/tables/manifest.js';
import { parseTableId, tableIdText } from '../store/tables/table-id.js';

/**
 * The configuration's own output mapping (`storage.output.tables`), Keboola's rules: an entry is
 * matched to a file of out/tables by `source`; each key it sets replaces the manifest's key of
 * that file ("output mapping in the configuration always has higher priority than the manifest");
 * the destination is the mapping's, else the manifest's, else the default bucket's.
 */

/** Why a table goes where it goes. */
export type DestinationReason = 'mapping' | 'manifest' | 'default bucket';

/** One entry of `storage.output.tables`, checked, as keys of a legacy manifest. */
export interface OutputMappingEntry {
  /** `storage.output.tables[i]` */
  where: string;
  /** a file name in out/tables */
  source: string;
  /** a table id, or null: the manifest's or the default bucket's */
  destination: string | null;
  /** the manifest keys the entry sets (destination included when set), replacing the manifest's */
  keys: Record<string, unknown>;
}

/** Most entries of one row's output mapping. */
export const MAX_OUTPUT_TABLES = 1000;

/** Keys of a mapping entry the loader applies as a manifest would. */
const MANIFEST_KEYS = [
  'destination',
  'incremental',
  'primary_key',
  'columns',
  'delimiter',
  'enclosure',
  'delete_where_column',
  'delete_where_values',
  'delete_where_operator',
  'metadata',
  'column_metadata',
  'table_metadata',
] as const;
/** Keys merged into the manifest's item by item (Keboola's ConfigurationMerger), not replaced whole. */
const METADATA_KEYS = ['metadata', 'column_metadata', 'table_metadata'];
const DELETE_KEYS = ['delete_where_column', 'delete_where_values', 'delete_where_operator'];
/** Keys Keboola knows that gex cannot honour yet: refused when they ask for something. */
const UNSUPPORTED_KEYS: Record<string, string> = {
  description: 'gex does not store table descriptions',
  schema: 'gex loads legacy (non-typed) tables only',
  distribution_key: 'gex has no distribution keys',
  tags: 'gex does not tag the files of a table load',
  write_always: 'gex loads no table of a failed row',
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** false, null, "", [] and {} ask for nothing: accepted wherever a key is not supported. */
const asksNothing = (v: unknown): boolean =>
  v === false ||
  v === null ||
  v === '' ||
  (Array.isArray(v) && v.length === 0) ||
  (isObject(v) && Object.keys(v).length === 0);

/** A name as it appears in a message: shown, quoted, bounded. */
const shown = (text: string): string => excerptId(text, 200);

/**
 * Reads and checks `storage.output.tables` of a unit's (merged) configuration; `unit` names the row
 * in errors. Nothing is read from disk: a run plans with it, and `gex check` shows it.
 */
export function parseOutputMapping(storage: JsonObject, unit: string): OutputMappingEntry[] {
  const output = toPlain(storage.get('output') ?? null);
  const list = isObject(output) ? output.tables : undefined;
  if (list === undefined || list === null) return [];
  const fail = (where: string, problem: string): never => {
    throw new UserError('GEX_OUTPUT_MAPPING_INVALID', `${unit}: ${where} ${problem}.`);
  };
  if (!Array.isArray(list)) return fail('storage.output.tables', 'must be a list of tables');
  if (list.length > MAX_OUTPUT_TABLES)
    fail('storage.output.tables', `lists ${list.length} tables, more than the ${MAX_OUTPUT_TABLES} a row may write`);
  const sources = new Map<string, string>();
  return (list as unknown[]).map((entry, i) => {
    const where = `storage.output.tables[${i}]`;
    if (!isObject(entry)) return fail(where, 'must be an object with at least "source"');
    const source = entry.source;
    if (typeof source !== 'string' || source === '')
      return fail(`${where}.source`, 'must be the name of a file in out/tables, such as "users.csv"');
    const sourceProblem =
      unsafeFileNameProblem(source) ??
      (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(source) ? 'contains a control or invisible character' : null) ??
      (source.endsWith('.manifest') ? "ends in .manifest, the name of a table's manifest" : null);
    if (sourceProblem) fail(`${where}.source`, `${shown(source)} ${sourceProblem}`);
    const earlier = sources.get(source);
    if (earlier) fail(`${where}.source`, `${shown(source)} is mapped already by ${earlier}`);
    sources.set(source, where);

    const keys: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(entry)) {
      if (key === 'source') continue;
      if ((MANIFEST_KEYS as readonly string[]).includes(key)) {
        // null leaves the manifest's value, as an absent key does
        if (value !== null) keys[key] = value;
      } else if (key === 'delete_where') {
        Object.assign(keys, legacyDeleteWhere(value, `${where}.delete_where`, fail));
      } else if (key in UNSUPPORTED_KEYS) {
        if (!asksNothing(value)) fail(`${where}.${key}`, `is not supported: ${UNSUPPORTED_KEYS[key]}; remove it`);
      } else {
        fail(where, `has the unknown key ${shown(key)}`);
      }
    }
    let destination: string | null = null;
    if (keys.destination !== undefined) {
      const text = keys.destination;
      if (typeof text === 'string' && /\.c-/.test(text) && !/^(in|out)\./.test(text))
        fail(`${where}.destination`, `${shown(text)} is not a bucket of this project (only in.c-… and out.c-…)`);
      try {
        destination = tableIdText(parseTableId(text, `${unit}: ${where}.destination`));
      } catch (error) {
        throw new UserError('GEX_OUTPUT_MAPPING_INVALID', (error as Error).message, { cause: error });
      }
      keys.destination = destination;
    }
    if (DELETE_KEYS.some((k) => k in keys)) {
      // the mapping's delete replaces the manifest's as a whole, never mixed key by key
      for (const k of DELETE_KEYS) if (!(k in keys)) keys[k] = k === 'delete_where_column' ? '' : undefined;
    }
    // every value checked as a manifest's would be, named by where it is in the configuration
    try {
      parseLoadManifest({ ...keys, destination: destination ?? 'in.c-x.x' }, `${unit}: ${where}`);
    } catch (error) {
      throw new UserError('GEX_OUTPUT_MAPPING_INVALID', (error as Error).message, { cause: error });
    }
    return { where, source, destination, keys };
  });
}

/** Keboola's `delete_where` list as the deprecated column/values/operator keys: one filter of set values. */
function legacyDeleteWhere(
  value: unknown,
  where: string,
  fail: (where: string, problem: string) => never,
): Record<string, unknown> {
  if (value === null || (Array.isArray(value) && value.length === 0)) return {};
  const unsupported = 'supports one entry with one where_filters item {column, operator "eq" or "ne", values_from_set}';
  if (!Array.isArray(value) || value.length !== 1 || !isObject(value[0])) return fail(where, unsupported);
  const { where_filters: filters, ...rest } = value[0];
  if (Object.keys(rest).length > 0) return fail(where, `${unsupported} (changed_since/until are not supported)`);
  if (!Array.isArray(filters) || filters.length !== 1 || !isObject(filters[0])) return fail(where, unsupported);
  const { column, operator, values_from_set: values, ...other } = filters[0];
  if (Object.keys(other).length > 0)
    return fail(where, `${unsupported} (values_from_workspace and other sources are not supported)`);
  return { delete_where_column: column, delete_where_values: values, delete_where_operator: operator ?? 'eq' };
}

/** Fails the row, before any of its tables is loaded, when a mapping names a file the row did not write. */
export function checkSources(entries: readonly OutputMappingEntry[], files: readonly string[], unit: string): void {
  const present = new Set(files);
  const missing = entries.filter((e) => !present.has(e.source)).map((e) => e.source);
  if (missing.length === 0) return;
  // Keboola's output mapping says `Table sources not found: "x.csv"`
  throw new UserError(
    'GEX_OUTPUT_MAPPING_INVALID',
    `${unit}: Table sources not found: ${missing.map((s) => quoteForLog(s)).join(', ')}. ` +
      `storage.output.tables names ${missing.length === 1 ? 'a file' : 'files'} the extraction did not write to out/tables` +
      (files.length > 0
        ? ` (it wrote ${files.slice(0, 10).map(shown).join(', ')}${files.length > 10 ? ', …' : ''})`
        : ' (it wrote none)') +
      '; no table of the row was loaded.',
  );
}

/** What a file is loaded with: its manifest with the mapping's keys over it, and why its destination is what it is. */
export interface EffectiveLoad {
  manifest: unknown;
  reason: DestinationReason;
  /** the mapping's columns, which a file with a header row must have as its header */
  headerMustBe: readonly string[] | null;
}

/**
 * The one decision per output file: the mapping entry (if any) over the manifest key by key, then
 * the destination — the mapping's, else the manifest's, else `defaultDestination()`.
 */
export function effectiveLoad(
  manifest: unknown,
  entry: OutputMappingEntry | undefined,
  defaultDestination: () => string,
): EffectiveLoad {
  if (!entry || !isObject(manifest)) {
    // without a mapping: exactly what a load did before output mapping existed
    const needsDefault = isObject(manifest) && manifest.destination == null;
    return {
      manifest: needsDefault ? { ...manifest, destination: defaultDestination() } : manifest,
      reason: needsDefault ? 'default bucket' : 'manifest',
      headerMustBe: null,
    };
  }
  const merged: Record<string, unknown> = { ...manifest };
  if (DELETE_KEYS.some((k) => k in entry.keys)) for (const k of DELETE_KEYS) delete merged[k];
  for (const [k, v] of Object.entries(entry.keys))
    if (v !== undefined) merged[k] = METADATA_KEYS.includes(k) ? mergeMetadata(k, manifest[k], v) : v;
  // a file with a header row (its manifest lists no columns) is checked against the mapping's columns, not re-read headless
  let headerMustBe: readonly string[] | null = null;
  const manifestColumns = manifest.columns;
  if (
    Array.isArray(entry.keys.columns) &&
    entry.keys.columns.length > 0 &&
    !(Array.isArray(manifestColumns) && manifestColumns.length > 0)
  ) {
    headerMustBe = entry.keys.columns as string[];
    delete merged.columns;
  }
  const reason: DestinationReason = entry.destination
    ? 'mapping'
    : manifest.destination != null
      ? 'manifest'
      : 'default bucket';
  if (merged.destination == null) merged.destination = defaultDestination();
  return { manifest: merged, reason, headerMustBe };
}

/**
 * The mapping's metadata over the manifest's, as Keboola merges them: `metadata` item by item by
 * key (a key of both keeps the manifest's place, the mapping's value), `column_metadata` column by
 * column the same way, `table_metadata` key by key. A value that is not of its shape replaces the
 * other whole (the load's checks then name it).
 */
function mergeMetadata(key: string, fromManifest: unknown, fromMapping: unknown): unknown {
  if (fromManifest === undefined || fromManifest === null) return fromMapping;
  if (key === 'metadata')
    return Array.isArray(fromManifest) && Array.isArray(fromMapping) ? [...fromManifest, ...fromMapping] : fromMapping;
  if (!isObject(fromManifest) || !isObject(fromMapping)) return fromMapping;
  if (key === 'table_metadata') return { ...fromManifest, ...fromMapping };
  const columns: Record<string, unknown> = { ...fromManifest };
  for (const [column, list] of Object.entries(fromMapping)) {
    const value = mergeMetadata('metadata', Object.hasOwn(columns, column) ? columns[column] : undefined, list);
    // defined, not assigned: a column named __proto__ stays a column
    Object.defineProperty(columns, column, { value, enumerable: true, writable: true, configurable: true });
  }
  return columns;
}

/** A file's header compared with the mapping's columns; the error names the file and both lists. */
export function checkHeader(file: string, header: readonly string[], columns: readonly string[], where: string): void {
  if (header.length === columns.length && header.every((c, i) => c === columns[i])) return;
  const list = (l: readonly string[]) => displayText(JSON.stringify(l.slice(0, 20)) + (l.length > 20 ? '…' : ''));
  throw new UserError(
    'GEX_TABLE_LOAD_REFUSED',
    `out/tables/${displayText(file)}: its header ${list(header)} is not the columns ${list(columns)} of ${where}; the table is unchanged.`,
  );
}

/** A unit as the check view needs it: its label for other units' lines, its merged `storage`, its name in errors. */
export interface TablePlanUnit {
  label: string;
  storage: JsonObject;
  unit: string;
  /**
   * the bucket the extractor names in its manifests, per iteration (outputBucketsOf); null: none
   * (the default bucket takes the tables); undefined: not known before the run
   */
  outputBuckets?: Array<string | null>;
}

/** Where a unit's tables without a mapped destination go, as far as its configuration says. */
function unmappedDestination(buckets: Array<string | null> | undefined, defaultBucket: string | null): string {
  const fallback = `default bucket${defaultBucket ? ` ${defaultBucket}` : ''}`;
  if (buckets === undefined) return `manifest or ${fallback}, decided after extraction`;
  const named = [...new Set(buckets.filter((b): b is string => b !== null))];
  if (named.length === 0) return `${fallback} (no outputBucket: the manifests name no destination)`;
  const from = `the manifests' destination, from outputBucket${named.some((b) => b.startsWith('ex-api-')) ? ' or config.id' : ''}`;
  const places = `${named.map((b) => `in.c-${b}.<table>`).join(', ')} (${from})`;
  return buckets.includes(null) ? `${places}; the ${fallback} for the iterations without one` : places;
}

/**
 * Where each unit's tables go and where its input tables come from, as far as the configuration
 * alone says (`gex check`, `gex run --dry-run`): a mapping's destination is known before the run;
 * a manifest exists only after extraction. An input table an earlier unit's mapping writes is
 * named as such. A unit whose mapping is invalid gets its error instead of lines.
 */
export function planTables(
  units: readonly TablePlanUnit[],
  defaultBucket: string | null,
): Array<{ lines: string[] } | { error: UserError }> {
  const written = new Map<string, string>();
  return units.map((u) => {
    const fallback = unmappedDestination(u.outputBuckets, defaultBucket);
    let entries: OutputMappingEntry[];
    let inputs: string[];
    try {
      entries = parseOutputMapping(u.storage, u.unit);
      inputs = inputTableIds(u.storage);
    } catch (error) {
      if (error instanceof UserError) return { error };
      throw error;
    }
    const lines: string[] = [];
    for (const id of inputs) {
      const by = written.get(id);
      lines.push(`input table ${shown(id)}${by ? ` ← written by the output mapping of ${by}` : ''}`);
    }
    for (const e of entries) {
      lines.push(
        e.destination
          ? `table ${shown(e.source)} → ${shown(e.destination)} (output mapping ${e.where})`
          : `table ${shown(e.source)} → ${fallback} (output mapping ${e.where} sets no destination)`,
      );
      if (e.destination) written.set(e.destination, u.label);
    }
    lines.push(`${entries.length === 0 ? 'tables' : 'other tables'} → ${fallback}`);
    return { lines };
  });
}

/** The source table ids of `storage.input.tables` (checked fully when the unit runs). */
function inputTableIds(storage: JsonObject): string[] {
  const input = toPlain(storage.get('input') ?? null);
  const list = isObject(input) ? input.tables : undefined;
  if (!Array.isArray(list)) return [];
  return list.flatMap((t) => (isObject(t) && typeof t.source === 'string' ? [t.source] : []));
}
