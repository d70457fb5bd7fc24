import { formatFloat } from './float-format.js';
import { JsonFloat, type JsonValue } from '../json/value.js';

export interface PhpJsonEncodeOptions {
  /**
   * Float digits: 17 once GE's JSON parser has raised `serialize_precision` (cells, filters,
   * state), `'shortest'` for PHP's default (request bodies).
   */
  floatPrecision?: number | 'shortest';
  /**
   * Values decoded from configuration are PHP arrays: `{}` is `[]` and an object whose keys are
   * 0..n-1 is a list. Response objects are `stdClass` and stay objects.
   */
  objectsAreArrays?: boolean;
}

/**
 * PHP `json_encode` with default flags (compact, `/` escaped as `\/`, non-ASCII as `\uXXXX`) as
 * text: `(string) json_encode(…)`. JSON has no INF or NAN, so a value holding one anywhere (a
 * response's 1e400, however deep, whatever its siblings) fails as a whole, and PHP's false is the
 * empty text — never `INF` inside otherwise valid JSON.
 */
export function phpJsonEncode(value: JsonValue, options: PhpJsonEncodeOptions = {}): string {
  return phpJsonEncodeOrFalse(value, options) || '';
}

/** PHP `json_encode` itself: false for a value holding INF or NAN, where PHP code keeps that false as a value. */
export function phpJsonEncodeOrFalse(value: JsonValue, options: PhpJsonEncodeOptions = {}): string | false {
  const precision = options.floatPrecision ?? 17;
  const arrays = options.objectsAreArrays ?? false;
  const parts: string[] = [];
  return encode(value, parts, precision, arrays) ? parts.join('') : false;
}

/** Appends the JSON of `v`; false (stopping there) at an INF or NAN float. */
function encode(v: JsonValue, out: string[], precision: number | 'shortest', arrays: boolean): boolean {
  if (v === null) out.push('null');
  else if (v === true) out.push('true');
  else if (v === false) out.push('false');
  else if (typeof v === 'number' || typeof v === 'bigint') out.push(String(v));
  else if (v instanceof JsonFloat) {
    if (!Number.isFinite(v.value)) return false;
    out.push(formatFloat(v.value, precision, 'e'));
  } else if (typeof v === 'string') out.push(phpJsonString(v));
  else if (Array.isArray(v)) {
    out.push('[');
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out.push(',');
      if (!encode(v[i], out, precision, arrays)) return false;
    }
    out.push(']');
  } else {
    if (arrays && isSequential(v)) return encode([...v.values()], out, precision, arrays);
    out.push('{');
    let first = true;
    for (const [k, x] of v) {
      if (!first) out.push(',');
      first = false;
      out.push(phpJsonString(k), ':');
      if (!encode(x, out, precision, arrays)) return false;
    }
    out.push('}');
  }
  return true;
}

function isSequential(m: Map<string, JsonValue>): boolean {
  let i = 0;
  for (const k of m.keys()) if (k !== String(i++)) return false;
  return true;
}

const SIMPLE = /^[\x20\x21\x23-\x2e\x30-\x5b\x5d-\x7f]*$/;

/** A string literal as PHP's json_encode writes it. */
export function phpJsonString(s: string): string {
  if (SIMPLE.test(s)) return `"${s}"`;
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    switch (c) {
      case 0x22:
        out += '\\"';
        break;
      case 0x5c:
        out += '\\\\';
        break;
      case 0x2f:
        out += '\\/';
        break;
      case 0x08:
        out += '\\b';
        break;
      case 0x0c:
        out += '\\f';
        break;
      case 0x0a:
        out += '\\n';
        break;
      case 0x0d:
        out += '\\r';
        break;
      case 0x09:
        out += '\\t';
        break;
      default:
        if (c < 0x20 || c > 0x7f) out += '\\u' + c.toString(16).padStart(4, '0');
        else out += s[i];
    }
  }
  return out + '"';
}
