import crypto, { createHash } from 'node:crypto';
import { formatFloat } from './float-format.js';
import { JsonFloat, type JsonValue } from '../json/value.js';
import { isIntegerKey } from './arrays.js';

/**
 * PHP `serialize()` of a decoded response value: objects are `stdClass`, lists are arrays,
 * string lengths are UTF-8 byte counts, floats use 17 significant digits (GE's JSON parser sets
 * `serialize_precision = 17`). Row ids and link hashes are md5 of this text.
 */
export function phpSerialize(v: JsonValue): string {
  return serializeValue(v, false);
}

/**
 * `serialize()` of a PHP array built from configuration: objects are arrays and integer-like
 * keys become integer keys (`i:0;`).
 */
export function phpSerializeArray(v: JsonValue): string {
  return serializeValue(v, true);
}

// string concatenation (V8 ropes) beats collecting parts for join(): this runs for every record
// that has child tables
function serializeValue(v: JsonValue, arrays: boolean): string {
  if (typeof v === 'string') return `s:${Buffer.byteLength(v)}:"${v}";`;
  if (typeof v === 'number' || typeof v === 'bigint') return `i:${v};`;
  if (v === null) return 'N;';
  if (v === true) return 'b:1;';
  if (v === false) return 'b:0;';
  if (v instanceof JsonFloat) return `d:${formatFloat(v.value, 17, 'E')};`;
  if (Array.isArray(v)) {
    let out = `a:${v.length}:{`;
    for (let i = 0; i < v.length; i++) out += `${indexKey(i)}${serializeValue(v[i], arrays)}`;
    return `${out}}`;
  }
  let out = arrays ? `a:${v.size}:{` : `O:8:"stdClass":${v.size}:{`;
  // a plain loop: a recursive call inside a forEach callback runs unoptimized and allocates per call
  for (const k of v.keys())
    out += `${arrays && isIntegerKey(k) ? `i:${k};` : stringKey(k)}${serializeValue(v.get(k)!, arrays)}`;
  return `${out}}`;
}

/**
 * `s:<bytes>:"<key>";` per property name: records repeat the same few names, and building the
 * text again for each was a third of the serialisation's garbage. Bounded: a response with
 * ever new names (hostile or not) only clears the cache.
 */
const keyTexts = new Map<string, string>();
export const MAX_KEY_TEXTS = 4096;
function stringKey(k: string): string {
  let text = keyTexts.get(k);
  if (text === undefined) {
    if (keyTexts.size >= MAX_KEY_TEXTS) keyTexts.clear();
    text = `s:${Buffer.byteLength(k)}:"${k}";`;
    keyTexts.set(k, text);
  }
  return text;
}

/** How many key texts are cached (tests: the cache stays bounded). */
export function cachedKeyTexts(): number {
  return keyTexts.size;
}

/** `i:<n>;` for list positions; the first few are shared. */
const INDEX_TEXTS = Array.from({ length: 64 }, (_, i) => `i:${i};`);
function indexKey(i: number): string {
  return i < INDEX_TEXTS.length ? INDEX_TEXTS[i] : `i:${i};`;
}

export function md5Hex(text: string): string {
  return hashOnce ? hashOnce('md5', text, 'hex') : createHash('md5').update(text, 'utf8').digest('hex');
}

// crypto.hash (Node ≥ 20.12): a one-shot digest without a Hash object, several times cheaper for short texts
const hashOnce = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;
