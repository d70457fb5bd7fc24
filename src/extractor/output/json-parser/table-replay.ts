import { isJsonObject, isScalar, type JsonObject, type JsonValue } from '../../../json/index.js';
import { md5Hex, phpJsonEncode, phpJsonEncodeOrFalse, phpSerialize, phpToString } from '../../../php/index.js';
import type { CsvFile } from '../csv-file.js';
import type { SpoolBatch } from '../spool.js';
import type { TableNameCheck } from '../table-files.js';
import { displayText } from '../../../common/log-text.js';
import { safeName } from '../../../php/safe-names.js';
import { decodeKey, type NodeType, SchemaNode } from './schema-node.js';
import { StructureError, TableWriteError, type Structure } from './structure.js';

type ColumnType = NodeType | 'injected';
type Lazy = () => string;

const NO_OUTER: Lazy = () => '';
const NO_INJECTED: JsonObject = new Map();
/** a renamed column that no row carries a value for */
const INJECTED_ONLY: JsonValue = null;

/**
 * The writing half of GE's JSON parser (json-parser `Parser::parse/parseRow/parseField`): replays
 * the queued batches against the final structure. Objects flatten into columns, arrays go to child
 * tables linked by `JSON_parentId` (md5 of the PHP-serialised row), injected columns (userData,
 * parent_*) are appended and renamed `_u0`… on a clash, with the rename remembered for the run.
 */
export class TableReplay {
  readonly tables = new Map<string, CsvFile>();
  private readonly layoutCache = new Map<SchemaNode, Layout>();
  private readonly columnCache = new Map<SchemaNode, CachedColumns>();
  /** a node's path (`items.lines`) and table name: fixed by the structure, made once instead of for each row */
  private readonly pathCache = new Map<SchemaNode, string>();
  private readonly tableNameCache = new Map<SchemaNode, string>();

  constructor(
    private readonly structure: Structure,
    private readonly aliases: Map<string, string>,
    private readonly openTable: (name: string) => CsvFile,
    private readonly onDataError: (message: string) => void,
    /** refuses table names that cannot be file names (response keys become table names) */
    private readonly checkTableName: TableNameCheck = () => {},
  ) {}

  writeBatch(batch: SpoolBatch): void {
    const item = this.structure.rootOf(batch.dataType)?.item;
    if (!item) throw new StructureError(`No structure known for '${batch.dataType}'`);
    this.writeList(batch.rows, item, batch.dataType, batch.injected);
  }

  private writeList(rows: JsonValue[], item: SchemaNode, cleanPath: string, injectedRaw: JsonObject): void {
    let tableName = this.tableNameCache.get(item);
    if (tableName === undefined) this.tableNameCache.set(item, (tableName = safeName(cleanPath)));
    let table = this.tables.get(tableName);
    const creating = !table;
    // GE's getHeaders runs when a table is created (its renames then apply to the batch's rows)
    // and again for every row; on an existing table only keys that are not injected columns yet
    // change anything, so the per-row pass is a lookup per key
    const injected = creating
      ? this.addInjected(item, this.aliased(injectedRaw), true).keys
      : this.aliased(injectedRaw);
    if (!table) {
      this.checkTableName(tableName, cleanPath);
      table = this.openTable(tableName);
      table.writeHeader(this.header(item));
      this.tables.set(tableName, table);
    }
    let columns = this.columns(item, injected);
    for (const raw of rows) {
      if (!creating && injected.size > 0) {
        const added = this.addInjected(item, injected, false);
        if (added.changed) columns = this.columns(item, added.keys);
      }
      let row: JsonObject;
      if (isJsonObject(raw)) row = raw;
      else if (Array.isArray(raw)) row = new Map([['data', phpJsonEncodeOrFalse(raw)]]);
      else row = new Map([['data', raw]]);
      table.writeRow(this.rowCells(row, item, cleanPath, NO_OUTER, columns, injected));
    }
  }

  private aliased(injected: JsonObject): JsonObject {
    if (injected.size === 0 || this.aliases.size === 0) return injected;
    const out: JsonObject = new Map();
    for (const [k, v] of injected) out.set(this.aliases.get(k) ?? k, v);
    return out;
  }

  /**
   * Injected keys become `parent` nodes of the row node (json-parser `getHeaders`). A key that is
   * a data property is renamed `key_u0`, `key_u1`… (the first free name) and the rename holds for
   * the whole run. When the table is being created the renamed key moves to the end of the
   * injected map, which is what the rows then carry. On an existing table the rows keep the key
   * (its value overwrites the property) and only the columns read are renamed — GE adds a new,
   * always empty column for each such row, past the frozen header (ragged rows).
   */
  private addInjected(
    item: SchemaNode,
    injected: JsonObject,
    creatingTable: boolean,
  ): { keys: JsonObject; changed: boolean } {
    let keys = injected;
    let changed = false;
    for (const key of injected.keys()) {
      const existing = item.prop(key);
      if (existing?.isInjected) continue;
      let finalKey = key;
      if (existing) {
        for (let i = 0; item.prop(finalKey); i++) finalKey = `${key}_u${i}`;
        this.aliases.set(key, finalKey);
        const value = keys.get(key)!;
        keys = new Map([...keys].filter(([k]) => k !== key));
        keys.set(finalKey, creatingTable ? value : INJECTED_ONLY);
      }
      item.entries.set(`_${finalKey}`, SchemaNode.injected());
      this.structure.assignNames();
      changed = true;
    }
    return { keys, changed };
  }

  /** Column names of a table's row node (json-parser `getHeaders`) and where each one is. */
  private header(node: SchemaNode): string[] {
    return this.layout(node).header;
  }

  private layout(node: SchemaNode): Layout {
    const cached = this.layoutCache.get(node);
    if (cached && cached.version === this.structure.version) return cached;
    const header: string[] = [];
    if (node.nodeType === 'scalar') header.push(node.name!);
    for (const [, child] of node.children()) {
      if (child.nodeType === 'object') header.push(...this.header(child));
      else header.push(child.name!);
    }
    const layout = { version: this.structure.version, header, index: new Map(header.map((name, i) => [name, i])) };
    this.layoutCache.set(node, layout);
    return layout;
  }

  /** Properties to read from a row, their types and nodes (json-parser `getColumnTypes`). */
  private columns(node: SchemaNode, injected: JsonObject): Column[] {
    let cached = this.columnCache.get(node);
    if (!cached || cached.version !== this.structure.version) {
      const layout = this.layout(node);
      const column = (key: string, type: ColumnType, child: SchemaNode | undefined): Column => ({
        key,
        type,
        child,
        layout,
        name: child?.name ?? node.name,
        at: cellIndex(layout, child?.name ?? node.name),
      });
      const columns: Column[] = [];
      if (node.nodeType === 'object') {
        for (const [entryKey, child] of node.children()) {
          const key = decodeKey(entryKey);
          columns.push(column(key, child.nodeType!, node.prop(key)));
        }
      } else if (node.nodeType === 'scalar') columns.push(column('data', 'scalar', node.prop('data')));
      cached = { version: this.structure.version, columns };
      this.columnCache.set(node, cached);
    }
    if (injected.size === 0) return cached.columns;
    // child rows all carry the same injected keys (JSON_parentId): merged once per key list
    if (cached.injected && sameKeys(cached.injected.keys, injected)) return cached.injected.columns;
    const layout = this.layout(node);
    const merged = cached.columns.map((c): Column => (injected.has(c.key) ? { ...c, type: 'injected' } : c));
    for (const key of injected.keys())
      if (!merged.some((c) => c.key === key)) {
        const child = node.prop(key);
        const name = child?.name ?? node.name;
        merged.push({ key, type: 'injected', child, layout, name, at: cellIndex(layout, name) });
      }
    cached.injected = { keys: [...injected.keys()], columns: merged };
    return merged;
  }

  /** `<parent path>.<key>`: the path of the property node `child` (a node has one path). */
  private childPath(child: SchemaNode, parentPath: string, key: string): string {
    let path = this.pathCache.get(child);
    if (path === undefined) this.pathCache.set(child, (path = `${parentPath}.${key}`));
    return path;
  }

  /**
   * The cells of one row, in header order (json-parser `parseRow`). `injected` values are the
   * row's too and win over its own properties of the same name; the merged row is built only
   * when its id is needed (json-parser merges them into every row).
   */
  private rowCells(
    row: JsonObject,
    node: SchemaNode,
    cleanPath: string,
    outer: Lazy,
    columns: Column[],
    injected: JsonObject = NO_INJECTED,
  ): string[] {
    const layout = this.layout(node);
    const { header, index } = layout;
    const cells = new Array<string>(header.length).fill('');
    // the row's id, made only for a row with nested data (most rows have none)
    let id: Lazy | undefined;
    for (const column of columns) {
      const { key, type, child } = column;
      const value = injected.size > 0 && injected.has(key) ? injected.get(key) : row.get(key);
      if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) {
        if (type !== 'object') putCell(cells, column, layout, node, '', cleanPath);
        continue;
      }
      if (type === 'array' && child?.item) {
        id ??= rowIdOf(row, injected, cleanPath, outer);
        const parentId = id();
        setCell(cells, index, child.name, parentId, cleanPath);
        this.writeList(
          Array.isArray(value) ? value : [value],
          child.item,
          this.childPath(child, cleanPath, key),
          new Map([['JSON_parentId', parentId]]),
        );
      } else if (type === 'object' && child && isJsonObject(value)) {
        id ??= rowIdOf(row, injected, cleanPath, outer);
        const inner = this.rowCells(
          value,
          child,
          this.childPath(child, cleanPath, key),
          id,
          this.columns(child, NO_INJECTED),
        );
        const names = this.header(child);
        for (let i = 0; i < names.length; i++) setCell(cells, index, names[i], inner[i], cleanPath);
      } else if (isScalar(value)) {
        putCell(cells, column, layout, node, phpToString(value), cleanPath);
      } else {
        const json = phpJsonEncode(value);
        this.onDataError(
          `Data parse error in '${key}' - unexpected '${Array.isArray(value) ? 'array' : 'object'}' where '${type}' was expected!`,
        );
        putCell(cells, column, layout, node, json, cleanPath);
      }
    }
    return cells;
  }
}

/**
 * A row's id (json-parser: the md5 of the PHP-serialised row with its injected columns, after the
 * id of the row it is nested in), made once, when first asked for.
 */
function rowIdOf(row: JsonObject, injected: JsonObject, cleanPath: string, outer: Lazy): Lazy {
  let rowId: string | undefined;
  return () => (rowId ??= `${cleanPath}_${md5Hex(phpSerialize(withInjected(row, injected)) + outer())}`);
}

/** The row as json-parser sees it: its properties, then the injected columns (overwriting a property of the same name in place). */
function withInjected(row: JsonObject, injected: JsonObject): JsonObject {
  if (injected.size === 0) return row;
  const merged = new Map(row);
  for (const [k, v] of injected) merged.set(k, v);
  return merged;
}

interface CachedColumns {
  version: number;
  columns: Column[];
  /** the columns with the last injected keys seen */
  injected?: { keys: string[]; columns: Column[] };
}

/** Whether `map` has exactly `keys`, in that order. */
function sameKeys(keys: string[], map: JsonObject): boolean {
  if (keys.length !== map.size) return false;
  let i = 0;
  for (const key of map.keys()) if (key !== keys[i++]) return false;
  return true;
}

interface Layout {
  version: number;
  header: string[];
  /** column name → position in `header` */
  index: Map<string, number>;
}

interface Column {
  key: string;
  type: ColumnType;
  /** the property's node (none for an injected key without one) */
  child: SchemaNode | undefined;
  /** the layout and the column name `at` was read for: valid while a row is written against both */
  layout: Layout;
  name: string | undefined;
  /** where a scalar value of the column goes in the row's cells; undefined: no such column (an error) */
  at: number | undefined;
}

/** The position of column `name` in a row's cells. */
function cellIndex(layout: Layout, name: string | undefined): number | undefined {
  return name === undefined ? undefined : layout.index.get(name);
}

/** Puts a column's scalar value (or its emptiness) in its cell; a column the header lacks is an error, as in setCell. */
function putCell(
  cells: string[],
  column: Column,
  layout: Layout,
  node: SchemaNode,
  value: string,
  cleanPath: string,
): void {
  // a node can be named after its column was cached (an injected key renamed `_u0` as rows arrive)
  const name = column.child?.name ?? node.name;
  if (column.at !== undefined && column.layout === layout && column.name === name) cells[column.at] = value;
  else setCell(cells, layout.index, name, value, cleanPath);
}

function setCell(
  cells: string[],
  index: Map<string, number>,
  name: string | undefined,
  value: string,
  cleanPath: string,
): void {
  const at = name === undefined ? undefined : index.get(name);
  if (at === undefined)
    throw new TableWriteError(
      `Error assigning '${displayText(value)}' to a non-existing column '${displayText(String(name))}'! (in '${displayText(cleanPath)}')`,
    );
  cells[at] = value;
}
