export type NodeType = 'scalar' | 'object' | 'array' | 'null';

export const ITEM_KEY = '[]';

/**
 * One node of the JSON parser's structure. It is kept as an ordered map of entries exactly like
 * the PHP array json-parser uses — `nodeType`, `headerNames`, `type` and child nodes under
 * `"[]"` (list items) or `"_" + key` (object properties) — because the entry order is what the
 * saved state (`json_parser.struct`) and the column order reproduce.
 */
export class SchemaNode {
  entries = new Map<string, string | SchemaNode>();

  get nodeType(): NodeType | undefined {
    return this.entries.get('nodeType') as NodeType | undefined;
  }
  set nodeType(t: NodeType) {
    this.entries.set('nodeType', t);
  }

  get name(): string | undefined {
    return this.entries.get('headerNames') as string | undefined;
  }
  set name(n: string) {
    this.entries.set('headerNames', n);
  }

  /** an injected column (userData, parent_*, JSON_parentId) */
  get isInjected(): boolean {
    return this.entries.get('type') === 'parent';
  }

  get item(): SchemaNode | undefined {
    return this.entries.get(ITEM_KEY) as SchemaNode | undefined;
  }

  prop(key: string): SchemaNode | undefined {
    return this.entries.get(propertyEntryKey(key)) as SchemaNode | undefined;
  }

  /** child node under an entry key (`"[]"` or `"_" + key`), created (and `created` called) when missing */
  childAt(entryKey: string, created?: () => void): SchemaNode {
    let child = this.entries.get(entryKey) as SchemaNode | undefined;
    if (!child) {
      child = new SchemaNode();
      this.entries.set(entryKey, child);
      created?.();
    }
    return child;
  }

  /** A deep copy. */
  clone(): SchemaNode {
    const copy = new SchemaNode();
    for (const [k, v] of this.entries) copy.entries.set(k, typeof v === 'string' ? v : v.clone());
    return copy;
  }

  /** child nodes with their entry keys, in order */
  *children(): IterableIterator<[string, SchemaNode]> {
    for (const [k, v] of this.entries) if (typeof v !== 'string') yield [k, v];
  }

  static injected(): SchemaNode {
    const node = new SchemaNode();
    node.entries.set('nodeType', 'scalar');
    node.entries.set('type', 'parent');
    return node;
  }
}

/**
 * The entry key of an object property (`id` → `"_id"`). Every property of every record is looked
 * up by it; the few names a response repeats are made once instead of for each (bounded: ever new
 * names only clear the cache).
 */
export function propertyEntryKey(key: string): string {
  let entryKey = entryKeys.get(key);
  if (entryKey === undefined) {
    if (entryKeys.size >= MAX_ENTRY_KEYS) entryKeys.clear();
    entryKey = `_${key}`;
    entryKeys.set(key, entryKey);
  }
  return entryKey;
}

const entryKeys = new Map<string, string>();
export const MAX_ENTRY_KEYS = 4096;

/** How many entry keys are cached (tests: the cache stays bounded). */
export function cachedEntryKeys(): number {
  return entryKeys.size;
}

/** Property key of a child entry (`"_id"` → `id`); `"[]"` stays. */
export function decodeKey(entryKey: string): string {
  return entryKey === ITEM_KEY ? entryKey : entryKey.slice(1);
}
