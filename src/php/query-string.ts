import { phpStringBytes, phpStringFromBytes } from './byte-string.js';
import { formatFloat } from './float-format.js';
import { JsonFloat, type JsonObject, type JsonValue } from '../json/value.js';

/** PHP `urlencode`: keeps `A-Z a-z 0-9 - _ .`, space becomes `+`, every other byte `%XX`. */
export function phpUrlencode(s: string): string {
  return encodeBytes(s, /[A-Za-z0-9_.-]/, true);
}

/** PHP `rawurlencode` (RFC 3986): keeps `A-Z a-z 0-9 - _ . ~`, space becomes `%20`. */
export function phpRawUrlencode(s: string): string {
  return encodeBytes(s, /[A-Za-z0-9_.~-]/, false);
}

function encodeBytes(s: string, keep: RegExp, plusForSpace: boolean): string {
  if (/^[A-Za-z0-9_.-]*$/.test(s)) return s;
  let out = '';
  for (const ch of s) {
    if (keep.test(ch)) out += ch;
    else if (plusForSpace && ch === ' ') out += '+';
    else for (const b of phpStringBytes(ch)) out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** PHP `urldecode`: `+` is a space, `%XX` a byte; malformed sequences stay as they are. */
export function phpUrldecode(s: string): string {
  return percentDecode(s.replace(/\+/g, ' '));
}

/**
 * PHP `rawurldecode`, byte for byte: PHP strings are bytes, so `%FF` and the raw bytes a string
 * already holds (a raw digest's) stay those bytes (byte-string.ts), never U+FFFD.
 */
export function percentDecode(s: string): string {
  if (!s.includes('%')) return s;
  const raw = phpStringBytes(s);
  const out = Buffer.alloc(raw.length);
  let n = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === 0x25 && i + 2 < raw.length && isHexDigit(raw[i + 1]) && isHexDigit(raw[i + 2])) {
      out[n++] = parseInt(String.fromCharCode(raw[i + 1], raw[i + 2]), 16);
      i += 2;
    } else out[n++] = raw[i];
  }
  return phpStringFromBytes(out.subarray(0, n));
}

function isHexDigit(byte: number): boolean {
  return (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66);
}

/** String form of a scalar inside http_build_query: booleans are `1`/`0`, floats 14 digits. */
function queryScalar(v: JsonValue): string {
  if (v === true) return '1';
  if (v === false) return '0';
  if (v instanceof JsonFloat) return formatFloat(v.value, 14, 'E');
  return String(v);
}

/**
 * PHP `http_build_query($params, '', '&', $encoding)`: insertion order, nulls and empty arrays
 * omitted, nested values as `key[sub]` with the brackets percent-encoded, list items by index.
 * RFC 1738 (the default) encodes with `urlencode` (space `+`), RFC 3986 with `rawurlencode`
 * (space `%20`, `~` kept).
 */
export function phpHttpBuildQuery(
  params: JsonObject | JsonValue[],
  encoding: 'RFC1738' | 'RFC3986' = 'RFC1738',
): string {
  const encode = encoding === 'RFC1738' ? phpUrlencode : phpRawUrlencode;
  const pieces: string[] = [];
  const build = (value: JsonObject | JsonValue[], prefix: string | null): void => {
    const entries: Iterable<[string | number, JsonValue]> = value.entries();
    for (const [key, v] of entries) {
      const k = prefix === null ? String(key) : `${prefix}[${key}]`;
      if (v === null) continue;
      if (Array.isArray(v) || v instanceof Map) build(v, k);
      else pieces.push(`${encode(k)}=${encode(queryScalar(v))}`);
    }
  };
  build(params, null);
  return pieces.join('&');
}
