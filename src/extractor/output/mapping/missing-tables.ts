import { UserError } from '../../../common/errors.js';
import type { JsonObject, JsonValue } from '../../../json/index.js';
import { asPhpArray, phpEmpty, phpJsonEncode, phpStringWordOffset, phpToString } from '../../../php/index.js';
import { tableFileName } from '../table-files.js';
import { arrayKey, field } from './config-values.js';

/** What GE's MissingTableHelper reads from one config (iteration). */
export interface MissingTablesConfig {
  /** null = the default bucket */
  bucket: string | null;
  /** the config's `incrementalOutput` */
  incremental: boolean;
  mappings: JsonValue | undefined;
}

export interface MissingTable {
  /** file name in out/tables */
  file: string;
  bucket: string | null;
  name: string;
  header: string[];
  manifest: string;
}

/**
 * GE's `MissingTableHelper`: after all tables are in place, every mapped table (mapping keys and,
 * recursively, `table` entries) of every config that does not exist yet gets a header-only CSV.
 * Its columns differ from a mapper's: `table` entries give no link column, a child table ends with
 * its parent-key column (`<parent>_pk` unless `parentKey.destination`; none when
 * `parentKey.disable`). A mapping that is itself a `table` entry stands for its child table only.
 * The manifest starts with `incremental` (the config's incrementalOutput), then `destination`,
 * then `primary_key`.
 */
export function missingTables(
  configs: MissingTablesConfig[],
  exists: (bucket: string | null, table: string) => boolean,
): MissingTable[] {
  const planned: MissingTable[] = [];
  const written = new Set<string>();
  for (const config of configs) {
    const mappings = phpEmpty(config.mappings) ? null : asPhpArray(config.mappings);
    if (!mappings) continue;
    const fill = (name: string, mapping: JsonValue | undefined, parentKey: JsonObject | null): void => {
      const columns: JsonValue[] = [];
      const primaryKey: JsonValue[] = [];
      let items = asPhpArray(mapping) ?? new Map<string, JsonValue>();
      if (!phpEmpty(items.get('type')) && items.get('type') === 'table') items = new Map([['0', mapping!]]);
      for (const [itemName, item] of items) {
        const entry = asPhpArray(item);
        if (!entry) {
          columns.push(item);
          continue;
        }
        const type = entry.get('type');
        if (phpEmpty(type) || type === 'column' || type === 'user') {
          if (!entry.has('mapping') || entry.get('mapping') === null) {
            throw new UserError('GEX_CONFIG_INVALID', `Missing mapping key at item with type "${configText(type)}"`);
          }
          const destination = destinationOf(entry.get('mapping')!);
          columns.push(destination);
          if (!phpEmpty(field(entry, 'mapping', 'primaryKey'))) primaryKey.push(destination);
        } else if (type === 'table') {
          const given = asPhpArray(entry.get('parentKey'));
          let key: JsonObject;
          if (phpEmpty(entry.get('parentKey'))) key = new Map([['destination', `${name}_pk`]]);
          else if (phpEmpty(given?.get('destination')))
            key = new Map([...(given ?? []), ['destination', `${name}_pk`]]);
          else key = given!;
          const destination = entry.get('destination');
          if (phpEmpty(destination))
            throw new UserError(
              'GEX_CONFIG_INVALID',
              `Bad Json to CSV Mapping configuration: Key 'destination' is not set for table '${itemName}'.`,
            );
          fill(arrayKey(destination), entry.get('tableMapping'), key);
        } else {
          throw new UserError('GEX_CONFIG_INVALID', `Invalid mapping type "${configText(type)}".`);
        }
      }
      // after the entries, as a mapper appends the parent key at the end of its table
      if (parentKey && !phpEmpty(parentKey.get('disable'))) parentKey = null;
      if (parentKey) {
        const destination = parentKey.get('destination') ?? null;
        columns.push(destination);
        if (!phpEmpty(parentKey.get('primaryKey'))) primaryKey.push(destination);
      }
      const file = tableFileName(config.bucket, name);
      if (columns.length === 0 || written.has(file) || exists(config.bucket, name)) return;
      const manifest: JsonObject = new Map([['incremental', config.incremental]]);
      if (config.bucket !== null) manifest.set('destination', `in.c-${config.bucket}.${name}`);
      if (primaryKey.length > 0) manifest.set('primary_key', primaryKey);
      written.add(file);
      planned.push({
        file,
        bucket: config.bucket,
        name,
        header: columns.map(phpToString),
        manifest: phpJsonEncode(manifest, { objectsAreArrays: true }),
      });
    };
    for (const [name, mapping] of mappings) fill(name, mapping, null);
  }
  return planned;
}

/** `$item['mapping']['destination']` as PHP reads it: null when missing, a string's first byte. */
function destinationOf(mapping: JsonValue): JsonValue {
  if (typeof mapping === 'string') return phpStringWordOffset(mapping);
  return field(mapping, 'destination') ?? null;
}

/** sprintf('%s') of a configuration value (objects are PHP arrays there). */
function configText(v: JsonValue | undefined): string {
  return asPhpArray(v) ? 'Array' : phpToString(v);
}
