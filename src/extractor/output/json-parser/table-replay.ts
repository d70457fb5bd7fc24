import {
  isJsonObject,
  isScalar,
  md5Hex,
  phpJsonEncode,
  phpSerialize,
  type JsonObject,
  type JsonValue,
} from '../../../php-compat/index.js';
import { cellText, type CsvFile } from '../csv-file.js';
import type { SpoolBatch } from '../spool.js';
import { safeName } from './safe-name.js';
import { decodeKey, type NodeType, SchemaNode } from './schema-node.js';
import { StructureError, type Structure } from './structure.js';

type ColumnType = NodeType | 'injected';
type Lazy = () => string;

const NO_OUTER: Lazy = () => '';
const NO_INJECTED: JsonObject = new Map();

function lazy(compute: () => string): Lazy {
  let value: string | undefined;
  return () => (value ??= compute());
}

/**
 * The writing half of GE's JSON parser (json-parser `Parser::parse/parseRow/parseField`): replays
 * the queued batches against the final structure. Objects flatten into columns, arrays go to child
 * tables linked by `JSON_parentId` (md5 of the PHP-serialised row), injected columns (userData,
 * parent_*) are appended and renamed `_u0`… on a clash, with the rename remembered for the run.
 */
export class TableReplay {
  readonly tables = new Map<string, CsvFile>();
  private readonly headerCache = new Map<SchemaNode, { version: number; header: string[] }>();
  private readonly columnCache = new Map<SchemaNode, { version: number; columns: Array<[string, ColumnType]> }>();

  constructor(
    private readonly structure: Structure,
    private readonly aliases: Map<string, string>,
    private readonly openTable: (name: string) => CsvFile,
    private readonly onDataError: (message: string) => void,
  ) {}

  writeBatch(batch: SpoolBatch): void {
    const item = this.structure.rootOf(batch.dataType)?.item;
    if (!item) throw new StructureError(`No structure known for '${batch.dataType}'`);
    this.writeList(batch.rows, item, batch.dataType, batch.injected);
  }

  private writeList(rows: JsonValue[], item: SchemaNode, cleanPath: string, injectedRaw: JsonObject): void {
    const tableName = safeName(cleanPath);
    let table = this.tables.get(tableName);
    const injected = this.addInjected(item, this.aliased(injectedRaw), !table);
    if (!table) {
      table = this.openTable(tableName);
      table.writeHeader(this.header(item));
      this.tables.set(tableName, table);
    }
    for (const raw of rows) {
      let row: JsonObject;
      if (isJsonObject(raw)) row = raw;
      else if (Array.isArray(raw)) row = new Map([['data', phpJsonEncode(raw)]]);
      else row = new Map([['data', raw]]);
      if (injected.size > 0) {
        row = new Map(row);
        for (const [k, v] of injected) row.set(k, v);
      }
      table.writeRow([...this.rowCells(row, item, cleanPath, NO_OUTER, injected).values()]);
    }
  }

  private aliased(injected: JsonObject): JsonObject {
    if (injected.size === 0 || this.aliases.size === 0) return injected;
    const out: JsonObject = new Map();
    for (const [k, v] of injected) out.set(this.aliases.get(k) ?? k, v);
    return out;
  }

  /**
   * Injected keys become `parent` nodes of the row node. When a table is created, a key that is
   * already a data property is renamed `key_u0`, `key_u1`… and the rename holds for the whole run.
   */
  private addInjected(item: SchemaNode, injected: JsonObject, creatingTable: boolean): JsonObject {
    let result = injected;
    for (const key of injected.keys()) {
      const existing = item.prop(key);
      if (existing?.isInjected) continue;
      let finalKey = key;
      if (existing) {
        if (!creatingTable) continue;
        for (let i = 0; item.prop(finalKey); i++) finalKey = `${key}_u${i}`;
        this.aliases.set(key, finalKey);
        result = new Map([...result].map(([k, v]) => [k === key ? finalKey : k, v]));
      }
      item.entries.set(`_${finalKey}`, SchemaNode.injected());
      this.structure.assignNames();
    }
    return result;
  }

  /** Column names of a table's row node (json-parser `getHeaders`). */
  private header(node: SchemaNode): string[] {
    const cached = this.headerCache.get(node);
    if (cached && cached.version === this.structure.version) return cached.header;
    const header: string[] = [];
    if (node.nodeType === 'scalar') header.push(node.name!);
    for (const [, child] of node.children()) {
      if (child.nodeType === 'object') header.push(...this.header(child));
      else header.push(child.name!);
    }
    this.headerCache.set(node, { version: this.structure.version, header });
    return header;
  }

  /** Properties to read from a row and their types (json-parser `getColumnTypes`). */
  private columns(node: SchemaNode, injected: JsonObject): Array<[string, ColumnType]> {
    let cached = this.columnCache.get(node);
    if (!cached || cached.version !== this.structure.version) {
      const columns: Array<[string, ColumnType]> = [];
      if (node.nodeType === 'object') {
        for (const [entryKey, child] of node.children()) columns.push([decodeKey(entryKey), child.nodeType!]);
      } else if (node.nodeType === 'scalar') columns.push(['data', 'scalar']);
      cached = { version: this.structure.version, columns };
      this.columnCache.set(node, cached);
    }
    if (injected.size === 0) return cached.columns;
    const merged = cached.columns.map(([k, t]): [string, ColumnType] => [k, injected.has(k) ? 'injected' : t]);
    for (const k of injected.keys()) if (!merged.some(([c]) => c === k)) merged.push([k, 'injected']);
    return merged;
  }

  private rowCells(row: JsonObject, node: SchemaNode, cleanPath: string, outer: Lazy, injected: JsonObject): Map<string, string> {
    const cells = new Map<string, string>();
    for (const name of this.header(node)) cells.set(name, '');
    const set = (name: string | undefined, value: string): void => {
      if (name === undefined || !cells.has(name)) {
        throw new StructureError(`Error assigning '${value}' to a non-existing column '${name}' in '${cleanPath}'`);
      }
      cells.set(name, value);
    };
    const id = lazy(() => `${cleanPath}_${md5Hex(phpSerialize(row) + outer())}`);
    for (const [column, type] of this.columns(node, injected)) {
      const child = node.prop(column);
      const value = row.get(column);
      if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) {
        if (type !== 'object') set(child?.name ?? node.name, '');
        continue;
      }
      if (type === 'array' && child?.item) {
        set(child.name, id());
        const parentId = new Map([['JSON_parentId', id() as JsonValue]]);
        this.writeList(Array.isArray(value) ? value : [value], child.item, `${cleanPath}.${column}`, parentId);
      } else if (type === 'object' && child && isJsonObject(value)) {
        for (const [name, cell] of this.rowCells(value, child, `${cleanPath}.${column}`, id, NO_INJECTED)) set(name, cell);
      } else if (isScalar(value)) {
        set(child?.name ?? node.name, cellText(value));
      } else {
        const json = phpJsonEncode(value);
        this.onDataError(`Data parse error in '${column}' - unexpected '${Array.isArray(value) ? 'array' : 'object'}' where '${type}' was expected!`);
        set(child?.name ?? node.name, json);
      }
    }
    return cells;
  }
}
