import { shortenLongName } from '../json-parser/safe-name.js';

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
