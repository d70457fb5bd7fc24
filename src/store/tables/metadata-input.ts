import { UserError } from '../../common/errors.js';
import { displayText, quoteForLog } from '../../common/log-text.js';
import { fromPlain } from '../../json/index.js';
import { phpToString } from '../../php/index.js';

/**
 * The rules of Keboola's bucket, table and column metadata (docs/storage-api.md#storage-metadata),
 * one definition for every way in: a manifest or output mapping's `metadata` / `column_metadata`,
 * and the metadata calls of `gex serve`. Every refusal names the field (`metadata[3][key]`) and
 * says what is allowed. Inputs are plain JSON values (what JSON.parse or toPlain gives).
 */

/** One key/value pair to set. */
export interface MetadataEntry {
  readonly key: string;
  readonly value: string;
}

/** A stored item as Keboola shows it. */
export interface MetadataItem {
  readonly id: string;
  readonly key: string;
  readonly value: string;
  readonly provider: string;
  readonly timestamp: string;
}

/** The provider of metadata a run's output mapping sets about the load itself (Keboola's `system`). */
export const SYSTEM_PROVIDER = 'system';

/** Longest key (Keboola's). */
export const MAX_METADATA_KEY_LENGTH = 255;
/** Longest provider. */
export const MAX_METADATA_PROVIDER_LENGTH = 255;
/** Largest value, in UTF-8 bytes (a MySQL TEXT, as Keboola stores it). */
export const MAX_METADATA_VALUE_BYTES = 65_535;
/** Most items one bucket, table or column holds (distinct provider and key). */
export const MAX_METADATA_PER_OBJECT = 1000;
/** Most items one call or one load sets, all its objects together. */
export const MAX_METADATA_PER_WRITE = 10_000;

/** Keboola's key characters: `KBC.createdBy.component.id`, `test_metadata_key1`, `some-key`. */
const KEY = /^[A-Za-z0-9._:-]+$/;
/** A provider: a component id (`keboola.ex-db-snowflake`), `user`, `system`. */
const PROVIDER = /^[A-Za-z0-9._-]+$/;
/** Half of a UTF-16 surrogate pair: no database stores it as it is. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Why metadata is refused, as Keboola's `storage.metadata.<problem>` code names it. */
export type MetadataProblem =
  'invalidParameter' | 'invalidStructure' | 'invalidKey' | 'invalidValue' | 'invalidProvider' | 'tooMany';

export class MetadataInvalid extends UserError {
  constructor(
    readonly problem: MetadataProblem,
    message: string,
  ) {
    super('GEX_METADATA_INVALID', message);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `where` as a message shows it: a field path, a file, the row that maps the table. */
const within = (where: string): string => (where === '' ? '' : `${where}: `);

/** The provider, checked. */
export function checkProvider(provider: unknown, where = ''): string {
  if (provider === undefined || provider === null || provider === '')
    throw new MetadataInvalid('invalidProvider', `${within(where)}Provider is required.`);
  const text = typeof provider === 'string' ? provider : '';
  if (!PROVIDER.test(text) || text.length > MAX_METADATA_PROVIDER_LENGTH)
    throw new MetadataInvalid(
      'invalidProvider',
      `${within(where)}Invalid metadata provider ${typeof provider === 'string' ? quoteForLog(shorten(provider)) : `(${typeof provider})`}: ` +
        `a provider is 1–${MAX_METADATA_PROVIDER_LENGTH} letters, digits, ".", "_" or "-", such as a component id.`,
    );
  return text;
}

/** A scalar as the text Keboola stores (PHP's string cast); undefined when it is not a scalar. */
function scalarText(value: unknown): string | undefined {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return phpToString(fromPlain(value));
  return undefined;
}

const shorten = (text: string): string => (text.length > 100 ? `${text.slice(0, 100)}…` : text);

/**
 * A list of `{key, value}` items (`field` names it: `metadata`), checked and with repeated keys
 * folded (the last value wins, at the first one's place). A list may be a JSON array or an object
 * with numeric keys (a form's `metadata[0][key]`).
 */
export function checkMetadataList(list: unknown, field: string, where = ''): MetadataEntry[] {
  const items = Array.isArray(list) ? list : isObject(list) ? Object.values(list) : undefined;
  if (items === undefined)
    throw new MetadataInvalid(
      'invalidParameter',
      `${within(where)}The ${field} parameter must be an array of objects with "key" and "value".`,
    );
  if (items.length > MAX_METADATA_PER_WRITE)
    throw new MetadataInvalid(
      'tooMany',
      `${within(where)}${field} has ${items.length} items, more than the ${MAX_METADATA_PER_WRITE} one write may set.`,
    );
  const byKey = new Map<string, string>();
  items.forEach((item, i) => {
    const at = `${field}[${i}]`;
    if (!isObject(item) || !('key' in item) || !('value' in item))
      throw new MetadataInvalid(
        'invalidStructure',
        `${within(where)}Invalid structure. Metadata must be provided as an array of objects with 'key' and 'value' members (${at} is not one).`,
      );
    const key = item.key;
    if (typeof key !== 'string' || !KEY.test(key) || key.length > MAX_METADATA_KEY_LENGTH)
      throw new MetadataInvalid(
        'invalidKey',
        `${within(where)}Invalid Metadata Key (${at}[key]): ${typeof key === 'string' ? (key === '' ? 'it is empty' : quoteForLog(shorten(key))) : `a ${key === null ? 'null' : typeof key}, not a text`}; ` +
          `a key is 1–${MAX_METADATA_KEY_LENGTH} letters, digits, ".", "_", "-" or ":" (such as KBC.description).`,
      );
    const value = scalarText(item.value);
    if (value === undefined)
      throw new MetadataInvalid(
        'invalidStructure',
        `${within(where)}Invalid structure. ${at}[value] must be a text (or a number or boolean), not ${Array.isArray(item.value) ? 'a list' : 'an object'}.`,
      );
    const problem = valueProblem(value);
    if (problem) throw new MetadataInvalid('invalidValue', `${within(where)}${at}[value] ${problem}.`);
    byKey.set(key, value);
  });
  return [...byKey].map(([key, value]) => ({ key, value }));
}

function valueProblem(value: string): string | null {
  // a value of up to 64 KiB UTF-8 has at most that many UTF-16 code units: counted only when it may be too long
  if (value.length > MAX_METADATA_VALUE_BYTES / 3 && Buffer.byteLength(value, 'utf8') > MAX_METADATA_VALUE_BYTES)
    return `is ${Buffer.byteLength(value, 'utf8')} bytes long (UTF-8); a value may be at most ${MAX_METADATA_VALUE_BYTES} bytes`;
  // PostgreSQL's text cannot hold NUL; both databases would store U+FFFD for a lone surrogate
  if (value.includes('\u0000')) return 'contains a NUL character (byte 0), which the store cannot hold';
  if (LONE_SURROGATE.test(value)) return 'is not valid Unicode (it has half of a surrogate pair)';
  return null;
}

/** Column metadata by column name, checked (`column_metadata` of a manifest, `columnsMetadata` of a call). */
export interface ColumnMetadataInput {
  readonly column: string;
  readonly entries: MetadataEntry[];
}

/**
 * `{column: [{key, value}…]}`, or Keboola's newer form keyed by position with `columnName` in
 * each item. Empty lists are dropped; a column named twice is one column. `field` names it in messages.
 */
export function checkColumnMetadata(value: unknown, field: string, where = ''): ColumnMetadataInput[] {
  const groups = isObject(value) ? Object.entries(value) : Array.isArray(value) ? [...value.entries()] : undefined;
  if (groups === undefined)
    throw new MetadataInvalid(
      'invalidParameter',
      `${within(where)}The ${field} parameter must be an object of column names, each with an array of objects with "key" and "value".`,
    );
  const byColumn = new Map<string, Map<string, string>>();
  let total = 0;
  for (const [index, list] of groups) {
    const at = `${field}[${displayText(shorten(String(index)))}]`;
    const entries = checkMetadataList(list, at, where);
    // the newer form: each item names its column (the PHP client fills it from the array's key)
    const items = Array.isArray(list) ? list : isObject(list) ? Object.values(list) : [];
    const named = items.map((item) => (isObject(item) ? item.columnName : undefined)).find((n) => n !== undefined);
    const column = named === undefined ? String(index) : named;
    if (typeof column !== 'string' || column === '')
      throw new MetadataInvalid('invalidStructure', `${within(where)}${at}: columnName must be the name of a column.`);
    if (entries.length === 0) continue;
    total += entries.length;
    if (total > MAX_METADATA_PER_WRITE)
      throw new MetadataInvalid(
        'tooMany',
        `${within(where)}${field} sets more than the ${MAX_METADATA_PER_WRITE} items one write may set.`,
      );
    const merged = byColumn.get(column) ?? new Map<string, string>();
    for (const e of entries) merged.set(e.key, e.value);
    byColumn.set(column, merged);
  }
  return [...byColumn].map(([column, entries]) => ({
    column,
    entries: [...entries].map(([key, v]) => ({ key, value: v })),
  }));
}
