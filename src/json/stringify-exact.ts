import { JsonFloat, type JsonValue } from './value.js';

/** JSON text that `decodeJson` reads back to the same value (floats always look like floats). */
export function stringifyExact(v: JsonValue): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(v);
    default:
      break; // objects: arrays, floats and maps below
  }
  if (v instanceof JsonFloat) return floatToken(v.value);
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i ? ',' : '') + stringifyExact(v[i]);
    return out + ']';
  }
  let out = '{';
  let first = true;
  for (const [k, x] of v) {
    out += `${first ? '' : ','}${JSON.stringify(k)}:${stringifyExact(x)}`;
    first = false;
  }
  return out + '}';
}

function floatToken(value: number): string {
  if (value === Infinity) return '1e999';
  if (value === -Infinity) return '-1e999';
  if (Object.is(value, -0)) return '-0.0';
  const s = String(value);
  return /[.eE]/.test(s) ? s : `${s}.0`;
}

/** Indented exact JSON for people to read (same values as `stringifyExact`). */
export function prettyExact(v: JsonValue, indent = ''): string {
  const inner = `${indent}  `;
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return `[\n${v.map((x) => inner + prettyExact(x, inner)).join(',\n')}\n${indent}]`;
  }
  if (v instanceof Map) {
    if (v.size === 0) return '{}';
    return `{\n${[...v].map(([k, x]) => `${inner}${JSON.stringify(k)}: ${prettyExact(x, inner)}`).join(',\n')}\n${indent}}`;
  }
  return stringifyExact(v);
}
