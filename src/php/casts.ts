import { PhpFloat, type JsonValue } from '../json/value.js';
import { formatFloat } from './float-format.js';

/** PHP 7.4's conversions of JSON values: empty(), (bool), is_numeric(), (int), (string). */

/**
 * PHP `empty()`. Configuration files are decoded by GE into PHP arrays, where `{}` is an empty
 * array; response objects are `stdClass` and never empty — hence `objectsAreArrays`.
 */
export function phpEmpty(v: JsonValue | undefined, objectsAreArrays = true): boolean {
  if (v === null || v === undefined || v === false || v === '' || v === '0') return true;
  if (typeof v === 'number') return v === 0;
  if (typeof v === 'bigint') return v === 0n;
  if (v instanceof PhpFloat) return v.value === 0;
  if (Array.isArray(v)) return v.length === 0;
  if (v instanceof Map) return objectsAreArrays && v.size === 0;
  return false;
}

/** PHP `(bool)` cast. */
export function phpBool(v: JsonValue | undefined, objectsAreArrays = true): boolean {
  return !phpEmpty(v, objectsAreArrays);
}

/** PHP `is_numeric()` for strings: optional whitespace, sign, digits, fraction, exponent. */
export function isNumericString(s: string): boolean {
  return /^[ \t\n\r\v\f]*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?[ \t\n\r\v\f]*$/.test(s);
}

/** PHP `(int)` cast of a scalar (strings use their leading numeric part, floats truncate). */
export function phpIntCast(v: JsonValue | undefined): number {
  if (v === null || v === undefined || v === false) return 0;
  if (v === true) return 1;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof PhpFloat) return Number.isFinite(v.value) ? Math.trunc(v.value) : 0;
  if (typeof v === 'string') {
    const m = /^[ \t\n\r\v\f]*([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?)/.exec(v);
    if (!m) return 0;
    const n = Number(m[1]);
    return Number.isFinite(n) ? Math.trunc(n) : 0;
  }
  if (Array.isArray(v)) return v.length === 0 ? 0 : 1;
  return 1;
}

/** PHP string conversion of a scalar: `true` is "1", `false` and null are "", floats 14 digits. */
export function phpToString(v: JsonValue | undefined): string {
  if (v === null || v === undefined || v === false) return '';
  if (v === true) return '1';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (v instanceof PhpFloat) return formatFloat(v.value, 14, 'E');
  return Array.isArray(v) ? 'Array' : 'Object';
}
