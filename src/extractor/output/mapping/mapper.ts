import { isScalar, type JsonObject, type JsonValue } from '../../../json/index.js';
import {
  asPhpArray,
  getDataFromMappingPath,
  isIntegerKey,
  md5Hex,
  phpEmpty,
  phpJsonEncode,
  phpJsonEncodeOrFalse,
  phpLooseEqualsWord,
  phpSerialize,
  phpSerializeArray,
  phpToString,
  phpVarExport,
} from '../../../php/index.js';
import type { CsvFile } from '../csv-file.js';
import type { ProducedTable } from '../record-parser.js';
import { arrayKey, field } from './config-values.js';

/** csvmap `BadConfigException`: a mapping that cannot be applied. */
export class BadMappingConfig extends Error {}

/** csvmap `BadDataException`: data that cannot be written as the mapping says. */
export class BadMappingData extends Error {}

const NO_SETTINGS: JsonObject = new Map();

/** The type of an entry as csvmap's `parseRow` switch sees it (unknown types are columns). */
function rowEntryType(settings: JsonObject): 'table' | 'user' | 'column' {
  const type = settings.get('type');
  if (phpEmpty(type)) return 'column';
  if (phpLooseEqualsWord(type, 'table')) return 'table';
  if (phpLooseEqualsWord(type, 'user')) return 'user';
  return 'column';
}

/** The type of an entry as csvmap's `getHeader` sees it (unknown types give no column). */
function headerEntryType(settings: JsonObject): 'table' | 'column' | 'none' {
  const type = settings.get('type');
  if (phpEmpty(type) || phpLooseEqualsWord(type, 'column') || phpLooseEqualsWord(type, 'user')) return 'column';
  if (phpLooseEqualsWord(type, 'table')) return 'table';
  return 'none';
}

/**
 * One table of `config.mappings` (keboola/csvmap `Mapper`): maps each record to a row of declared
 * columns and writes it at once; `table` entries feed child mappers linked by a parent key (the
 * record's primary key values, or the md5 of the PHP-serialised record).
 */
export class Mapper {
  private readonly mapping = new Map<string, JsonValue>();
  private result: ProducedTable | null = null;
  private readonly children = new Map<string, Mapper>();
  private parentKey: [column: string, value: string] | null = null;
  private parentPK: string | null = null;

  constructor(
    mapping: JsonObject,
    readonly type: string,
    private readonly createFile: () => CsvFile,
  ) {
    // a string is shorthand for a column with that destination, except under an integer-like key
    // (PHP made it an int key, which csvmap's `is_string($key)` skips: the entry then has no destination)
    for (const [key, settings] of mapping) {
      const shorthand = typeof settings === 'string' && !isIntegerKey(key);
      this.mapping.set(
        key,
        shorthand
          ? new Map<string, JsonValue>([
              ['type', 'column'],
              ['mapping', new Map([['destination', settings]])],
            ])
          : settings,
      );
    }
  }

  /** Writes the records (the table is created even when there are none). */
  parse(data: JsonValue[], userData: JsonObject): void {
    const table = this.resultTable();
    for (const row of data) {
      const parsed = this.parseRow(row, userData);
      // keboola/csv refuses cells that are not scalar
      const bad = [...parsed].filter(([, v]) => v !== null && !isScalar(v));
      if (bad.length > 0) {
        throw new BadMappingData(
          `Error writing '${bad.map(([k]) => k).join(',')}' column: Cannot write data into column: ${phpVarExport(bad[0][1])}`,
        );
      }
      table.csv.writeRow([...parsed.values()].map(phpToString));
    }
  }

  /** Every table of this mapper and its children (GE's `getCsvFiles`): null for tables never created. */
  tables(): Map<string, ProducedTable | null> {
    const childTables = new Map<string, ProducedTable | null>();
    for (const child of this.children.values()) {
      for (const [name, table] of child.tables()) if (!childTables.has(name)) childTables.set(name, table);
    }
    const tables = new Map<string, ProducedTable | null>([[this.type, this.result]]);
    for (const [name, table] of childTables) tables.set(name, table);
    return tables;
  }

  private settings(key: string): JsonObject {
    return asPhpArray(this.mapping.get(key)) ?? NO_SETTINGS;
  }

  private parseRow(row: JsonValue, userData: JsonObject): Map<string, JsonValue> {
    const result = new Map<string, JsonValue>();
    for (const key of this.mapping.keys()) {
      const settings = this.settings(key);
      const delimiter = settings.get('delimiter');
      // the key "" is the record itself only for a scalar record; on objects it is the property ""
      let value =
        key === '' && isScalar(row)
          ? row
          : getDataFromMappingPath(row, key, phpEmpty(delimiter) ? '.' : phpToString(delimiter));
      switch (rowEntryType(settings)) {
        case 'table': {
          const child = this.childMapper(settings, key);
          const parentKey = settings.get('parentKey');
          const linked = phpEmpty(field(parentKey, 'disable'));
          const hasPrimaryKey = this.primaryKey().size > 0;
          if (!hasPrimaryKey && phpEmpty(value, false)) {
            if (linked) result.set(arrayKey(settings.get('destination')), null);
            break;
          }
          const keys = this.primaryKeyValues(row, userData);
          if (linked) {
            if (!hasPrimaryKey) result.set(arrayKey(settings.get('destination')), keys.map(phpToString).join(','));
            const destination = field(parentKey, 'destination');
            const column = phpEmpty(destination) ? `${this.type}_pk` : arrayKey(destination);
            child.parentKey = [column, keys.map(phpToString).join(',')];
            if (!phpEmpty(field(parentKey, 'primaryKey'))) child.parentPK = column;
          }
          child.parse(Array.isArray(value) ? value : [value], userData);
          break;
        }
        case 'user':
          result.set(arrayKey(field(settings, 'mapping', 'destination')), getDataFromMappingPath(userData, key, '/'));
          break;
        default:
          if (value !== null && !isScalar(value) && !phpEmpty(settings.get('forceType')))
            value = phpJsonEncodeOrFalse(value);
          result.set(arrayKey(field(settings, 'mapping', 'destination')), value);
      }
    }
    // `$result += $parentKey`: a mapped column of the same name wins
    if (this.parentKey && !result.has(this.parentKey[0])) result.set(this.parentKey[0], this.parentKey[1]);
    return result;
  }

  /** Primary key columns by mapping path, the inherited parent key last. */
  private primaryKey(): Map<string, JsonValue> {
    const primaryKey = new Map<string, JsonValue>();
    for (const key of this.mapping.keys()) {
      const settings = this.settings(key);
      if (!phpEmpty(field(settings, 'mapping', 'primaryKey')))
        primaryKey.set(key, field(settings, 'mapping', 'destination') ?? null);
    }
    if (this.parentPK !== null && !phpEmpty(this.parentPK)) primaryKey.set(this.parentPK, this.parentPK);
    return primaryKey;
  }

  /** The values that link child rows: the primary key values, or one md5 of the record (and the injected columns). */
  private primaryKeyValues(row: JsonValue, userData: JsonObject): JsonValue[] {
    const primaryKey = this.primaryKey();
    if (primaryKey.size === 0) {
      return [md5Hex(userData.size === 0 ? phpSerialize(row) : phpSerialize(row) + phpSerializeArray(userData))];
    }
    const values: JsonValue[] = [];
    for (const [path, column] of primaryKey) {
      const settings = this.settings(path);
      if (this.parentKey && phpLooseEqualsWord(column, this.parentKey[0])) values.push(this.parentKey[1]);
      else if (!phpEmpty(settings.get('type')) && phpLooseEqualsWord(settings.get('type'), 'user'))
        values.push(userData.get(path) ?? null);
      else {
        const delimiter = settings.get('delimiter');
        values.push(getDataFromMappingPath(row, path, phpEmpty(delimiter) ? '.' : phpToString(delimiter)));
      }
    }
    if (values.some((v) => v !== null && !isScalar(v))) {
      throw new BadMappingConfig(
        `Only scalar values are allowed in primary key. Primary key: ${phpJsonEncode(values)}`,
      );
    }
    return values;
  }

  /** The mapper of a `table` entry; an entry whose destination is this table maps into this mapper. */
  private childMapper(settings: JsonObject, key: string): Mapper {
    const destination = settings.get('destination');
    if (!phpEmpty(destination) && phpLooseEqualsWord(destination, this.type)) {
      if (phpEmpty(field(settings, 'parentKey', 'disable'))) {
        throw new BadMappingConfig("'parentKey.disable' must be true to parse child values into parent's table");
      }
      return this;
    }
    for (const required of ['tableMapping', 'destination']) {
      if (phpEmpty(settings.get(required)))
        throw new BadMappingConfig(`Key '${required}' is not set for table '${key}'.`);
    }
    const name = arrayKey(destination);
    let child = this.children.get(name);
    if (!child) {
      const tableMapping = asPhpArray(settings.get('tableMapping'));
      if (!tableMapping) throw new BadMappingConfig(`Key 'tableMapping' of table '${key}' must be an object.`);
      child = new Mapper(tableMapping, name, this.createFile);
      this.children.set(name, child);
    }
    return child;
  }

  private resultTable(): ProducedTable {
    if (!this.result) {
      const header = this.header();
      const csv = this.createFile();
      csv.writeHeader(header);
      this.result = { name: this.type, csv, primaryKey: [...this.primaryKey().values()] };
    }
    return this.result;
  }

  /** Columns in mapping order; a link column per `table` entry only while this table has no primary key. */
  private header(): string[] {
    const header: string[] = [];
    const hasPrimaryKey = this.primaryKey().size > 0;
    for (const key of this.mapping.keys()) {
      const settings = this.settings(key);
      const kind = headerEntryType(settings);
      if (kind === 'column') {
        const destination = field(settings, 'mapping', 'destination');
        if (phpEmpty(destination))
          throw new BadMappingConfig(`Key 'mapping.destination' is not set for column '${key}'.`);
        header.push(headerCell(destination, key));
      } else if (kind === 'table' && !hasPrimaryKey) {
        const destination = settings.get('destination');
        if (phpEmpty(destination)) throw new BadMappingConfig(`Key 'destination' is not set for table '${key}'.`);
        if (phpEmpty(field(settings, 'parentKey', 'disable'))) header.push(headerCell(destination, key));
      }
    }
    if (this.parentKey) header.push(this.parentKey[0]);
    return header;
  }
}

function headerCell(destination: JsonValue | undefined, key: string): string {
  if (destination !== undefined && destination !== null && !isScalar(destination)) {
    throw new BadMappingConfig(`The destination of '${key}' must be a string.`);
  }
  return phpToString(destination);
}
