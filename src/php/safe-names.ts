import { createHash } from 'node:crypto';
import { phpStrWordCount } from './strings.js';

/**
 * The table and column names Generic Extractor's two parsers make of a JSON key: keboola/json-parser's
 * `getSafeName` and the legacy parser's `createSafeName` (php-csvmap). Rules of GE's PHP libraries,
 * kept here so that both the extractor's output and the secret masker (a secret an API returns as a
 * key becomes a column name) use one definition.
 */

/**
 * json-parser `getSafeName` shortening of names over 64 bytes (acronym or md5 + the tail). `name`
 * is a byte string (one char per byte, as PHP sees it).
 */
export function shortenLongName(name: string): string {
  let short: string;
  const starts = name.match(/(?:^|(?<=[^A-Za-z0-9_]))[A-Za-z0-9_]/g);
  if (phpStrWordCount(name) > 1 && starts) short = starts.join('');
  else short = createHash('md5').update(name, 'latin1').digest('hex');
  short += '_';
  const remaining = 64 - short.length;
  const from = Math.max(0, name.length - remaining);
  const space = name.indexOf(' ', from);
  const next = space > 0 ? space : name.indexOf('_', from);
  return next < 0 ? short : short + name.slice(next);
}

/**
 * Table and column names of the JSON parser: every byte outside `[A-Za-z0-9-]` becomes `_`,
 * names over 64 bytes are shortened, runs of `_` collapse and are trimmed.
 */
export function safeName(raw: string): string {
  let name = replaceBytes(raw);
  if (name.length > 64) name = shortenLongName(name);
  return name.replace(/[^A-Za-z0-9-]+/g, '_').replace(/^_+|_+$/g, '');
}

/** `preg_replace('/[^A-Za-z0-9-]/', '_')` works on bytes: a multi-byte character becomes several `_`. */
function replaceBytes(s: string): string {
  if (/^[\x00-\x7f]*$/.test(s)) return s.replace(/[^A-Za-z0-9-]/g, '_');
  let out = '';
  for (const ch of s) out += /[A-Za-z0-9-]/.test(ch) ? ch : '_'.repeat(Buffer.byteLength(ch));
  return out;
}

const cache = new Map<string, string>();

/**
 * The legacy parser's `createSafeName`: names over 64 bytes are shortened on the *raw* name
 * (acronym or md5 + tail), then every byte outside `[A-Za-z0-9-]` becomes `_` **without**
 * collapsing runs, then `_` is trimmed from both ends (`user/{id}` → `user__id`).
 */
export function legacySafeName(raw: string): string {
  let result = cache.get(raw);
  if (result === undefined) {
    // PHP works on bytes: a multi-byte character counts (and is replaced) byte by byte
    let name = Buffer.from(raw, 'utf8').toString('latin1');
    if (name.length > 64) name = shortenLongName(name);
    result = name.replace(/[^A-Za-z0-9-]/g, '_').replace(/^_+|_+$/g, '');
    if (cache.size > 10_000) cache.clear();
    cache.set(raw, result);
  }
  return result;
}
