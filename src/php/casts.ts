import { JsonFloat, type JsonValue } from '../json/value.js';
import { formatFloat } from './float-format.js';

/** PHP 7.4's conversions and tests of JSON values: empty(), (bool), is_numeric(), filter_var int, (int), (string), gettype(). */

/**
 * PHP `empty()`. Configuration files are decoded by GE into PHP arrays, where `{}` is an empty
 * array; response objects are `stdClass` and never empty — hence `objectsAreArrays`.
 */
export function phpEmpty(v: JsonValue | undefined, objectsAreArrays = true): boolean {
  if (v === null || v === undefined || v === false || v === '' || v === '0') return true;
  if (typeof v === 'number') return v === 0;
  if (typeof v === 'bigint') return v === 0n;
  if (v instanceof JsonFloat) return v.value === 0;
  if (Array.isArray(v)) return v.length === 0;
  if (v instanceof Map) return objectsAreArrays && v.size === 0;
  return false;
}

/** PHP `(bool)` cast. */
export function phpBool(v: JsonValue | undefined, objectsAreArrays = true): boolean {
  return !phpEmpty(v, objectsAreArrays);
}

/**
 * PHP 7.4 `is_numeric()` for strings: optional leading whitespace, sign, digits, fraction,
 * exponent. Trailing whitespace makes a string non-numeric (PHP 8 allows it; GE runs 7.4).
 */
export function isNumericString(s: string): boolean {
  return /^[ \t\n\r\v\f]*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(s);
}

/** PHP 7.4 `is_numeric()`: ints and floats, and numeric strings. */
export function phpIsNumeric(v: JsonValue | undefined): boolean {
  if (typeof v === 'number' || typeof v === 'bigint' || v instanceof JsonFloat) return true;
  return typeof v === 'string' && isNumericString(v);
}

/** PHP `filter_var($v, FILTER_VALIDATE_INT)`: the integer, or false for anything else. */
export function phpFilterValidateInt(v: JsonValue | undefined): number | false {
  if (typeof v === 'number') return Number.isInteger(v) ? v : false;
  if (typeof v === 'bigint') return Number(v);
  if (v === true) return 1;
  if (v instanceof JsonFloat) return Number.isInteger(v.value) ? v.value : false;
  if (typeof v === 'string') {
    const trimmed = v.trim();
    return /^[+-]?(0|[1-9]\d*)$/.test(trimmed) ? Number(trimmed) : false;
  }
  return false;
}

/**
 * A string as a number the way PHP 7 converts it in arithmetic and comparisons: its leading
 * numeric part (after leading whitespace), else 0.
 */
export function phpLeadingNumber(s: string): number {
  const m = /^[ \t\n\r\v\f]*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?/.exec(s);
  return m ? Number(m[0]) : 0;
}

/** PHP `(int)` cast of a scalar (strings use their leading numeric part, floats truncate). */
export function phpIntCast(v: JsonValue | undefined): number {
  if (v === null || v === undefined || v === false) return 0;
  if (v === true) return 1;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof JsonFloat) return Number.isFinite(v.value) ? Math.trunc(v.value) : 0;
  if (typeof v === 'string') {
    const n = phpLeadingNumber(v);
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
  if (v instanceof JsonFloat) return formatFloat(v.value, 14, 'E');
  return Array.isArray(v) ? 'Array' : 'Object';
}

/** PHP `gettype()` of a configuration value (decoded as PHP arrays: objects are `array` too). */
export function phpGettype(v: JsonValue | undefined): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number' || typeof v === 'bigint') return 'integer';
  if (v instanceof JsonFloat) return 'double';
  return 'array';
}
