import { JsonFloat, type JsonValue } from '../json/value.js';
import { isNumericString, phpEmpty, phpLeadingNumber } from './casts.js';
import { phpStrcmp } from './strings.js';

/**
 * PHP 7 loose comparison (`==`) of a value against `null`: true for null, false, 0, 0.0, "" and
 * an empty array. A JSON object (stdClass) is never loosely null.
 */
export function phpLooseEqualsNull(v: JsonValue | undefined): boolean {
  if (v === null || v === undefined || v === false || v === '') return true;
  if (typeof v === 'number') return v === 0;
  if (typeof v === 'bigint') return v === 0n;
  if (v instanceof JsonFloat) return v.value === 0;
  if (Array.isArray(v)) return v.length === 0;
  return false;
}

/** PHP 7 `$a == $b` for two strings: numeric strings compare as numbers ("1" == "01" == "1e0"). */
export function phpLooseEqualStrings(a: string, b: string): boolean {
  if (a === b) return true;
  if (isNumericString(a) && isNumericString(b)) return Number(a) === Number(b);
  return false;
}

/**
 * PHP 7 `$value == 'word'` for a configuration value against a non-numeric string literal (as in
 * `switch ($settings['type'])`): strings compare as strings, booleans by truthiness, numbers
 * against 0 (the word converts to 0), null only with "".
 */
export function phpLooseEqualsWord(v: JsonValue | undefined, word: string): boolean {
  if (typeof v === 'string') return phpLooseEqualStrings(v, word);
  if (v === null || v === undefined) return word === '';
  if (typeof v === 'boolean') return v === (word !== '' && word !== '0');
  if (typeof v === 'number' || typeof v === 'bigint' || v instanceof JsonFloat) {
    const n = v instanceof JsonFloat ? v.value : Number(v);
    return isNumericString(word) ? n === Number(word) : n === 0;
  }
  return false;
}

/** PHP 7 `$a == $b` for a string against a string or a boolean (a string compares as its truthiness). */
export function phpLooseEqualsString(a: string | boolean, b: string): boolean {
  return typeof a === 'boolean' ? a === !phpEmpty(b) : phpLooseEqualStrings(a, b);
}

/** PHP 7 `<=>` of two strings: numeric when both are numeric strings, else byte-wise (strcmp). */
export function phpCompareStrings(a: string, b: string): number {
  if (isNumericString(a) && isNumericString(b)) return Number(a) - Number(b);
  return phpStrcmp(a, b);
}

/** PHP 7 `$total >= $limit` for an integer total and any decoded JSON value. */
export function phpGreaterOrEqual(total: number, limit: JsonValue): boolean {
  if (limit === null) return true; // compared as booleans: anything >= false
  if (typeof limit === 'boolean') return !limit || total !== 0;
  if (typeof limit === 'number') return total >= limit;
  if (typeof limit === 'bigint') return BigInt(total) >= limit;
  if (limit instanceof JsonFloat) return total >= limit.value;
  if (typeof limit === 'string') return total >= phpLeadingNumber(limit);
  if (Array.isArray(limit)) return false; // an array is always greater
  return total >= 1; // an object compares as 1
}
