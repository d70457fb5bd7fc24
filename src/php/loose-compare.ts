import { PhpFloat, type JsonValue } from '../json/value.js';
import { isNumericString } from './casts.js';

/**
 * PHP 7 loose comparison (`==`) of a value against `null`: true for null, false, 0, 0.0, "" and
 * an empty array. A JSON object (stdClass) is never loosely null.
 */
export function phpLooseEqualsNull(v: JsonValue | undefined): boolean {
  if (v === null || v === undefined || v === false || v === '') return true;
  if (typeof v === 'number') return v === 0;
  if (typeof v === 'bigint') return v === 0n;
  if (v instanceof PhpFloat) return v.value === 0;
  if (Array.isArray(v)) return v.length === 0;
  return false;
}

/** PHP 7 `$a == $b` for two strings: numeric strings compare as numbers ("1" == "01" == "1e0"). */
export function phpLooseEqualStrings(a: string, b: string): boolean {
  if (a === b) return true;
  if (isNumericString(a) && isNumericString(b) && !/\s$/.test(a) && !/\s$/.test(b)) return Number(a) === Number(b);
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
  if (typeof v === 'number' || typeof v === 'bigint' || v instanceof PhpFloat) {
    const n = v instanceof PhpFloat ? v.value : Number(v);
    return isNumericString(word) ? n === Number(word) : n === 0;
  }
  return false;
}
