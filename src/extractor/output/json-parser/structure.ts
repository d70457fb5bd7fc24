import { ApplicationError, UserError } from '../../../common/errors.js';
import { displayText } from '../../../common/log-text.js';
import { isJsonObject, isScalar, stringifyExact, type JsonObject, type JsonValue } from '../../../json/index.js';
import { safeName } from '../../../php/safe-names.js';
import { decodeKey, ITEM_KEY, propertyEntryKey, SchemaNode, type NodeType } from './schema-node.js';

/** A parser error surfaces as a user error, like GE's "Error parsing response JSON". */
export class StructureError extends UserError {
  constructor(message: string) {
    super('GEX_RESPONSE_NOT_TABULAR', `Error parsing response JSON: ${message}`);
  }
}

/**
 * A row that does not fit the table it was analysed into, found when the tables are written at the
 * end of the run. GE's parser raises this outside the step that turns parser errors into user errors,
 * so GE ends with an application error (exit 2); gex keeps that exit code.
 */
export class TableWriteError extends ApplicationError {
  constructor(message: string) {
    super('GEX_TABLE_WRITE_FAILED', message);
  }
}

/**
 * The JSON parser's schema of everything seen in a run (json-parser `Analyzer` + `Structure`):
 * type inference with GE's upgrade rules (scalar/object → array, the null/array quirk), and
 * column names assigned once, unique per table, after every batch.
 */
export class Structure {
  /** data types (`"_" + type`) → root array nodes */
  readonly root = new SchemaNode();
  /** names taken per table; not persisted, like GE */
  private readonly taken = new Map<string, Set<string>>();
  /** bumped whenever columns can change, to invalidate cached headers */
  version = 0;
  /** counts real changes (a node, type or name added or changed), unlike `version` */
  changes = 0;
  private readonly changed = (): void => {
    this.changes++;
  };

  /** `warn`: GE's analysis warnings (a list inside a list), as they happen */
  constructor(private readonly warn: (message: string) => void = () => {}) {}

  rootOf(dataType: string): SchemaNode | undefined {
    return this.root.prop(dataType);
  }

  analyse(rows: JsonValue[], dataType: string): void {
    const node = this.root.childAt(`_${dataType}`, this.changed);
    this.analyseList(rows, node, dataType);
    this.record(node, 'array', dataType);
    this.version++;
  }

  private analyseList(list: JsonValue[], node: SchemaNode, path: string): void {
    const itemPath = `${path}.[]`;
    const item = node.childAt(ITEM_KEY, this.changed);
    if (list.length === 0) this.record(item, 'null', itemPath);
    let previous: NodeType | null = null;
    for (const value of list) {
      const type = this.analyseValue(value, node.childAt(ITEM_KEY, this.changed), itemPath, undefined, true);
      if (previous !== null && type !== previous && type !== 'null' && previous !== 'null') {
        throw new StructureError(`Data in '${itemPath}' contains incompatible data types '${previous}' and '${type}'.`);
      }
      previous = type;
    }
  }

  /**
   * The value's path (for messages) is `parent` + `.key`, built only when needed: most values are
   * scalars that never need it, and building it for each would be most of the analysis' work.
   */
  private analyseValue(
    value: JsonValue,
    node: SchemaNode,
    parent: string,
    key: string | undefined,
    inList: boolean,
  ): NodeType {
    let type: NodeType;
    if (value === null) type = 'null';
    else if (isJsonObject(value)) {
      const path = pathOf(parent, key);
      // a plain loop: the recursive call inside a forEach callback was allocated and run unoptimized
      // for every record (4× the time of the analysis, ~380 bytes of garbage per record)
      for (const k of value.keys())
        this.analyseValue(value.get(k)!, node.childAt(propertyEntryKey(k), this.changed), path, k, false);
      type = 'object';
    } else if (Array.isArray(value)) {
      if (inList) {
        // a list inside a list is written as JSON text, with GE's warning for each
        this.warn(`Converting nested array '${displayText(pathOf(parent, key))}' to JSON string.`);
        type = 'scalar';
      } else {
        this.analyseList(value, node, pathOf(parent, key));
        type = 'array';
      }
    } else type = 'scalar';
    if (node.nodeType !== type) this.record(node, type, pathOf(parent, key));
    return type;
  }

  /** Records a node type; a conflicting type upgrades the node or fails, as json-parser does. */
  private record(node: SchemaNode, type: NodeType, path: string): void {
    const old = node.nodeType;
    if (old === type) return;
    if (old === undefined) {
      node.nodeType = type;
      this.changes++;
      return;
    }
    if (old === 'array' || type === 'array') this.upgradeToArray(node, type, path);
    else if (type === 'null') return;
    else if (old === 'null') {
      node.nodeType = type;
      this.changes++;
    } else throw new StructureError(`Unhandled nodeType change from "${old}" to "${type}" in "${path}"`);
  }

  private upgradeToArray(node: SchemaNode, type: NodeType, path: string): void {
    const old = node.nodeType!;
    const item = node.item;
    if (!item?.nodeType) throw new StructureError('Array contents are unknown');
    const other = old === 'array' ? type : old;
    if (item.nodeType !== other && other !== 'null' && item.nodeType !== 'null') {
      throw new StructureError(`Data array in '${path}' contains incompatible types '${item.nodeType}' and '${other}'`);
    }
    // properties recorded on the node itself (object → array) move into the item
    for (const [key, child] of node.children()) if (key !== ITEM_KEY) item.entries.set(key, child);
    item.nodeType = type !== 'array' ? type : old;
    const upgraded = new Map<string, string | SchemaNode>([
      [ITEM_KEY, item],
      ['nodeType', 'array'],
    ]);
    if (node.name) {
      item.name = 'data';
      upgraded.set('headerNames', node.name);
    }
    node.entries = upgraded;
    this.changes++;
  }

  /** json-parser `generateHeaderNames`: names every node that has none (or a PHP-empty one). */
  assignNames(): void {
    for (const [typeKey, rootNode] of this.root.children()) {
      for (const [, child] of rootNode.children()) this.nameNode(child, '[]', typeKey);
    }
    this.version++;
  }

  private nameNode(node: SchemaNode, dotted: string, table: string): void {
    const current = node.name;
    if (current === undefined || current === '' || current === '0') {
      node.name = dotted === '[]' ? 'data' : this.unique(table, safeName(dotted));
      this.changes++;
    }
    let prefix = dotted;
    if (node.nodeType === 'array') {
      table = `${table}.${dotted}`;
      prefix = '';
    }
    for (const [entryKey, child] of node.children()) {
      const key = decodeKey(entryKey);
      this.nameNode(child, prefix === '' || child.isInjected ? key : `${prefix}.${key}`, table);
    }
  }

  private unique(table: string, name: string): string {
    let names = this.taken.get(table);
    if (!names) {
      names = new Set();
      this.taken.set(table, names);
    }
    let candidate = name;
    for (let i = 0; names.has(candidate); i++) candidate = `${name}_u${i}`;
    names.add(candidate);
    return candidate;
  }

  /** A deep copy (nodes and the names taken) that changes independently of this one. */
  clone(): Structure {
    const copy = new Structure();
    for (const [k, v] of this.root.entries) copy.root.entries.set(k, typeof v === 'string' ? v : v.clone());
    for (const [table, names] of this.taken) copy.taken.set(table, new Set(names));
    copy.version = this.version;
    copy.changes = this.changes;
    return copy;
  }

  /** Everything that decides how rows are written, as one string: equal strings, equal tables. */
  signature(): string {
    return stringifyExact([this.toState(), [...this.taken].map(([table, names]) => [table, [...names]])]);
  }

  /** `{"_type": node, …}` as saved in state (`json_parser.struct.data`). */
  toState(): JsonObject {
    return nodeToState(this.root);
  }

  /** Seeds the structure from a saved state; names are kept, the uniqueness registry is not. */
  load(data: JsonValue): void {
    if (!isJsonObject(data)) return;
    for (const [key, value] of data) this.root.entries.set(key, nodeFromState(value, `json_parser.struct.data.${key}`));
    this.version++;
  }
}

function pathOf(parent: string, key: string | undefined): string {
  return key === undefined ? parent : `${parent}.${key}`;
}

function nodeToState(node: SchemaNode): JsonObject {
  const out: JsonObject = new Map();
  for (const [k, v] of node.entries) out.set(k, typeof v === 'string' ? v : nodeToState(v));
  return out;
}

const NODE_TYPES = new Set(['null', 'array', 'object', 'scalar', 'string', 'integer', 'double', 'boolean']);

function nodeFromState(value: JsonValue, path: string): SchemaNode {
  if (!isJsonObject(value))
    throw new UserError('GEX_STATE_INVALID', `Invalid parser structure in state at ${path}: expected an object`);
  const node = new SchemaNode();
  for (const [k, v] of value) {
    if (isJsonObject(v)) node.entries.set(k, nodeFromState(v, `${path}.${k}`));
    else if (isScalar(v) && (k === 'nodeType' || k === 'headerNames' || k === 'type')) node.entries.set(k, String(v));
    else throw new UserError('GEX_STATE_INVALID', `Invalid parser structure in state at ${path}.${k}`);
  }
  const type = node.nodeType;
  if (type === undefined || !NODE_TYPES.has(type))
    throw new UserError('GEX_STATE_INVALID', `Invalid parser structure in state at ${path}: unknown node type`);
  return node;
}
