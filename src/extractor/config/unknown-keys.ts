import type { Logger } from '../../common/logger.js';
import { displayId } from '../../common/log-text.js';
import { isJsonObject, type JsonValue } from '../../json/index.js';
import { closestKey } from './closest-key.js';
import { parametersSchema } from './schema.js';

/**
 * Generic Extractor ignores keys it does not know, and so does gex — but a typo such as
 * `paginaton` then silently changes what is extracted. This finds such keys so that the run can
 * warn about them without changing anything else. What a key is known is read from the schema
 * (its `properties`); where the schema gives no `properties` (params, headers, placeholders,
 * mappings, userData, function objects, iteration items, ...) keys are the user's own and never
 * reported.
 */

export interface UnknownKey {
  /** the JSON path of the key, e.g. `parameters.api.paginaton`, hostile text made safe */
  path: string;
  /** the nearest known key of the same object, when it is close enough to be a likely typo */
  suggestion?: string;
}

interface SchemaNode {
  $ref?: string;
  properties?: Record<string, SchemaNode>;
  anyOf?: SchemaNode[];
  items?: SchemaNode;
}

/** Unknown keys longer than this are shown cut (a configuration may hold a megabyte-long key). */
const SHOWN_KEY_LENGTH = 64;

export function findUnknownKeys(parameters: JsonValue, root = 'parameters'): UnknownKey[] {
  const schema = parametersSchema as unknown as SchemaNode & { definitions: Record<string, SchemaNode> };
  const resolve = (node: SchemaNode): SchemaNode =>
    node.$ref ? schema.definitions[node.$ref.split('/').pop()!] : node;
  const attributes = attributeNames(parameters);
  const found = new Map<string, UnknownKey>();

  const visit = (value: JsonValue, node: SchemaNode, path: string): void => {
    const branches = [node, ...(node.anyOf ?? [])].map(resolve);
    if (Array.isArray(value)) {
      const items = branches.find((b) => b.items)?.items;
      if (items) value.forEach((item, i) => visit(item, items, `${path}[${i}]`));
      return;
    }
    if (!isJsonObject(value)) return;
    const shapes = branches.filter((b) => b.properties);
    if (shapes.length === 0) return; // free-form: the keys are the user's
    const known = new Map<string, SchemaNode>();
    for (const shape of shapes) for (const [key, sub] of Object.entries(shape.properties!)) known.set(key, sub);
    for (const [key, child] of value) {
      const sub = known.get(key);
      if (sub) visit(child, sub, `${path}.${key}`);
      // `#` keys are encrypted values; in `config`, any key an `attr` function reads is meant
      else if (!key.startsWith('#') && !(path === `${root}.config` && isAttribute(key, attributes))) {
        const unknownPath = `${path}.${shownKey(key)}`;
        if (!found.has(unknownPath))
          found.set(unknownPath, { path: unknownPath, suggestion: closestKey(key, [...known.keys()]) });
      }
    }
  };
  visit(parameters, schema, root);
  return [...found.values()];
}

/** The warning line of an unknown key. */
export function unknownKeyWarning(unknown: UnknownKey): string {
  const hint = unknown.suggestion === undefined ? '' : `: did you mean ${JSON.stringify(unknown.suggestion)}?`;
  return `Unknown key ${unknown.path} (ignored)${hint}`;
}

/** Logs one warning per unknown key of `parameters`. */
export function warnUnknownKeys(parameters: JsonValue, logger: Logger): void {
  for (const unknown of findUnknownKeys(parameters)) logger.warn(unknownKeyWarning(unknown));
}

/** A key as one safe token of a log line: plain, or JSON-quoted with control characters escaped; cut when long. */
function shownKey(key: string): string {
  const characters = Array.from(key);
  if (characters.length <= SHOWN_KEY_LENGTH) return displayId(key);
  return `${displayId(characters.slice(0, SHOWN_KEY_LENGTH).join(''))}…(${characters.length} characters)`;
}

/** The names `{"attr": "name"}` functions read anywhere in the parameters (config values reach them as `attr`). */
function attributeNames(value: JsonValue): Set<string> {
  const names = new Set<string>();
  const walk = (v: JsonValue): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (isJsonObject(v)) {
      const attr = v.get('attr');
      if (typeof attr === 'string') names.add(attr);
      for (const child of v.values()) walk(child);
    }
  };
  walk(value);
  return names;
}

/** Nested config values are read as `attr` "key.sub" (the context is flattened). */
function isAttribute(key: string, names: Set<string>): boolean {
  if (names.has(key)) return true;
  for (const name of names) if (name.startsWith(`${key}.`)) return true;
  return false;
}
