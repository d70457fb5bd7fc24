/**
 * Generated configurations and API bodies are written as JSON *text*, because the differences worth
 * finding hide in how a number is spelled (`1.0`, `-0.0`, `1e15`, 2^63) and in the order of keys that
 * look like integers (a JS object would move `"1"` before `"b"`). A value is plain JSON, or one of two
 * markers: `{ $number: "1e15" }` (the literal is written as is) and `{ $entries: [[key, value], …] }`
 * (an object whose keys keep their order).
 */
export type JsonText =
  null | boolean | number | string | NumberLiteral | OrderedObject | JsonText[] | { [key: string]: JsonText };

export interface NumberLiteral {
  $number: string;
}

export interface OrderedObject {
  $entries: [string, JsonText][];
}

export const num = (literal: string): NumberLiteral => ({ $number: literal });
export const ordered = (entries: [string, JsonText][]): OrderedObject => ({ $entries: entries });

export function isNumberLiteral(value: unknown): value is NumberLiteral {
  return typeof value === 'object' && value !== null && typeof (value as NumberLiteral).$number === 'string';
}

export function isOrderedObject(value: unknown): value is OrderedObject {
  return typeof value === 'object' && value !== null && Array.isArray((value as OrderedObject).$entries);
}

/** The entries of an object value (plain or ordered), or undefined for anything else. */
export function entriesOf(value: JsonText | undefined): [string, JsonText][] | undefined {
  if (isOrderedObject(value)) return value.$entries;
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && !isNumberLiteral(value))
    return Object.entries(value);
  return undefined;
}

/** JSON text of a value; `indent` pretty-prints (used for reports). */
export function toJsonText(value: JsonText, indent = ''): string {
  const step = indent === '' ? '' : '  ';
  const write = (v: JsonText, pad: string): string => {
    if (v === null || typeof v === 'boolean') return String(v);
    if (typeof v === 'number') return Number.isFinite(v) ? JSON.stringify(v) : 'null';
    if (typeof v === 'string') return JSON.stringify(v);
    if (isNumberLiteral(v)) return v.$number;
    const inner = pad + step;
    const nl = indent === '' ? '' : '\n';
    if (Array.isArray(v)) {
      if (v.length === 0) return '[]';
      return `[${nl}${v.map((x) => inner + write(x, inner)).join(`,${nl}`)}${nl}${pad}]`;
    }
    const entries = entriesOf(v) ?? [];
    if (entries.length === 0) return '{}';
    const sep = indent === '' ? ':' : ': ';
    return `{${nl}${entries.map(([k, x]) => `${inner}${JSON.stringify(k)}${sep}${write(x, inner)}`).join(`,${nl}`)}${nl}${pad}}`;
  };
  return write(value, indent === '' ? '' : '');
}

/** The value at a dotted path of plain keys (used by the API model to read its own records). */
export function valueAt(value: JsonText | undefined, path: string[]): JsonText | undefined {
  let current = value;
  for (const key of path) {
    const entries = entriesOf(current);
    if (entries) current = [...entries].reverse().find(([k]) => k === key)?.[1];
    else if (Array.isArray(current) && /^\d+$/.test(key)) current = current[Number(key)];
    else return undefined;
  }
  return current;
}
