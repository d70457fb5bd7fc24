import { isJsonObject, isScalar, type JsonObject, type JsonValue } from '../../../json/index.js';
import {
  md5Hex,
  phpJsonEncode,
  phpJsonEncodeOrFalse,
  phpLooseEqualStrings,
  phpSerialize,
  phpToString,
} from '../../../php/index.js';
import type { CsvFile } from '../csv-file.js';
import { StructureError } from '../json-parser/structure.js';
import type { OpenTable } from '../record-parser.js';
import type { SpoolBatch } from '../spool.js';
import type { TableNameCheck } from '../table-files.js';
import { legacySafeName } from '../../../php/safe-names.js';
import { arrayItemType, type LegacyStruct } from './legacy-struct.js';

/** The cells of one row keyed by column name (`CsvRow`: one cell per distinct header name). */
type CsvRow = Map<string, JsonValue>;

const INJECTED_TYPE = 'string';

/**
 * The writing half of the legacy parser (keboola-legacy/json-parser `Parser::parse/parseRow/
 * parseField`). Unlike the new parser it keys cells by sanitised name, so a later value with the
 * same sanitised name overwrites an earlier one, and a header name that repeats is replaced by the
 * md5 of its unsanitised form (an always-empty column). Injected columns replace same-named data
 * properties in the row.
 */
export class LegacyReplay {
  readonly tables = new Map<string, CsvFile>();
  private readonly headers = new Map<string, string[]>();
  private readonly headerCache = new Map<string, string[]>();

  constructor(
    private readonly struct: LegacyStruct,
    private readonly openTable: OpenTable,
    private readonly onDataError: (message: string) => void,
    private readonly onWarning: (message: string) => void,
    private readonly checkTableName: TableNameCheck = () => {},
  ) {}

  writeBatch(batch: SpoolBatch): void {
    this.parse(batch.rows, batch.dataType, batch.injected);
  }

  private parse(data: JsonValue[], type: string, parentId: JsonObject): void {
    const table = this.table(type, parentId);
    const parentColumns = [...parentId.keys()];
    for (const raw of data) {
      let row: JsonObject;
      if (isJsonObject(raw)) row = raw;
      else if (Array.isArray(raw)) row = new Map([['data', phpJsonEncodeOrFalse(raw)]]);
      else row = new Map([['data', raw]]);
      if (parentId.size > 0) {
        row = new Map(row);
        for (const [k, v] of parentId) row.set(k, v);
      }
      table.writeRow([...this.parseRow(row, type, parentColumns, '').values()].map(phpToString));
    }
  }

  /** `createCsvFile`: the header is fixed by the first batch of the raw type; files are keyed by safe name. */
  private table(type: string, parentId: JsonObject): CsvFile {
    let header = this.headers.get(type);
    if (!header || header.length === 0) {
      header = this.header(type, [...parentId.keys()]);
      this.headers.set(type, header);
    }
    const safeType = legacySafeName(type);
    let table = this.tables.get(safeType);
    if (!table) {
      this.checkTableName(safeType, type);
      table = this.openTable(safeType);
      table.writeHeader(header);
      this.tables.set(safeType, table);
    }
    return table;
  }

  /** `getHeader`: properties in order (objects expanded as `safe(prop)_child`), then injected keys, validated. */
  private header(type: string, parentColumns: string[]): string[] {
    const key = `${type}\u0000${parentColumns.join('\u0000')}`;
    const cached = this.headerCache.get(key);
    if (cached) return cached;
    const raw: string[] = [];
    for (const [column, dataType] of this.definitions(type)) {
      if (dataType === 'object')
        for (const child of this.header(`${type}.${column}`, [])) raw.push(`${legacySafeName(column)}_${child}`);
      else raw.push(column);
    }
    raw.push(...parentColumns);
    // validateHeader: a sanitised name seen before becomes the md5 of the unsanitised one
    const header: string[] = [];
    for (const name of raw) {
      const safe = legacySafeName(name);
      header.push(header.some((h) => phpLooseEqualStrings(h, safe)) ? md5Hex(name) : safe);
    }
    this.headerCache.set(key, header);
    return header;
  }

  private definitions(type: string): Map<string, string> {
    return this.struct.definitions(type);
  }

  private parseRow(row: JsonObject, type: string, parentColumns: string[], outerHash: string): CsvRow {
    const cells: CsvRow = new Map();
    for (const name of this.header(type, parentColumns)) cells.set(name, null);
    const rowId = `${type}_${md5Hex(phpSerialize(row) + outerHash)}`;
    for (const [column, dataType] of mergedColumns(this.definitions(type), parentColumns)) {
      this.parseField(row, cells, rowId, column, dataType, type);
    }
    return cells;
  }

  private parseField(
    row: JsonObject,
    cells: CsvRow,
    rowId: string,
    column: string,
    declared: string,
    type: string,
  ): void {
    const safeColumn = legacySafeName(column);
    let value = row.get(column);
    if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) {
      // empty objects write nothing, to keep their columns out of the row
      if (declared !== 'object') setCell(cells, safeColumn, null, type);
      return;
    }
    if (declared === 'NULL') {
      this.onWarning(`Encountered data where 'NULL' was expected from previous analysis in '${type}'`);
      setCell(cells, column, phpJsonEncode(row), type);
      return;
    }
    let dataType = declared;
    if (arrayItemType(dataType) !== false) {
      if (!Array.isArray(value)) value = [value];
      dataType = 'array';
    }
    if (dataType === 'array') {
      const items = Array.isArray(value) ? value : [value];
      setCell(cells, safeColumn, rowId, type);
      this.parse(items, `${type}.${column}`, new Map([['JSON_parentId', rowId]]));
    } else if (dataType === 'object') {
      if (!isJsonObject(value))
        throw new StructureError(
          `Unexpected '${Array.isArray(value) ? 'array' : 'scalar'}' where an object was expected in '${type}.${column}'`,
        );
      const child = this.parseRow(value, `${type}.${column}`, [], rowId);
      for (const [key, cell] of child) setCell(cells, legacySafeName(`${safeColumn}_${key}`), cell, type);
    } else if (isScalar(value)) {
      setCell(cells, safeColumn, value, type);
    } else {
      const json = phpJsonEncode(value);
      this.onDataError(
        `Data parse error in '${column}' - unexpected '${isJsonObject(value) ? 'object' : 'array'}' where '${dataType}' was expected!`,
      );
      setCell(cells, safeColumn, json, type);
    }
  }
}

/** `CsvRow::setValue`: only existing columns can be set. */
function setCell(cells: CsvRow, column: string, value: JsonValue, type: string): void {
  if (!cells.has(column)) {
    throw new StructureError(
      `Error assigning '${phpToString(value)}' to a non-existing column '${column}'! (in '${type}')`,
    );
  }
  cells.set(column, value);
}

/**
 * `array_replace($definitions, $parentCols)`: injected keys replace same-named properties in place
 * and the rest follow; keys stay as they are (integer-like ones included).
 */
function mergedColumns(definitions: Map<string, string>, parentColumns: string[]): Map<string, string> {
  if (parentColumns.length === 0) return definitions;
  const merged = new Map(definitions);
  for (const k of parentColumns) merged.set(k, INJECTED_TYPE);
  return merged;
}
