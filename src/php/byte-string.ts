/**
 * PHP strings are byte strings; gex keeps strings as JS strings holding UTF-8 text. A byte
 * string that is not valid UTF-8 (a raw hash digest) is kept losslessly by mapping each byte of
 * an invalid sequence to a lone surrogate U+DC80–U+DCFF (the "surrogateescape" scheme). No valid
 * UTF-8 text decodes to such a code unit, so bytes → string → bytes is exact for any input.
 */

const ESCAPE_BASE = 0xdc00;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The length of the valid UTF-8 sequence starting at `i`, or 0 if there is none. */
function sequenceLength(bytes: Uint8Array, i: number): number {
  const lead = bytes[i];
  if (lead < 0x80) return 1;
  const cont = (k: number, min = 0x80, max = 0xbf): boolean =>
    i + k < bytes.length && bytes[i + k] >= min && bytes[i + k] <= max;
  if (lead >= 0xc2 && lead <= 0xdf) return cont(1) ? 2 : 0;
  if (lead >= 0xe0 && lead <= 0xef) {
    // E0: no overlongs; ED: no UTF-16 surrogates
    const [min, max] = lead === 0xe0 ? [0xa0, 0xbf] : lead === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return cont(1, min, max) && cont(2) ? 3 : 0;
  }
  if (lead >= 0xf0 && lead <= 0xf4) {
    const [min, max] = lead === 0xf0 ? [0x90, 0xbf] : lead === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return cont(1, min, max) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** A PHP byte string as a gex string: UTF-8 decoded, each invalid byte escaped. */
export function phpStringFromBytes(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    // not valid UTF-8: decoded piece by piece below
  }
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let out = '';
  for (let i = 0; i < buffer.length;) {
    const length = sequenceLength(buffer, i);
    if (length === 0) {
      out += String.fromCharCode(ESCAPE_BASE + buffer[i]);
      i += 1;
    } else {
      out += buffer.toString('utf8', i, i + length);
      i += length;
    }
  }
  return out;
}

/** The bytes PHP would hold for a gex string: UTF-8, escaped bytes restored. */
export function phpStringBytes(s: string): Buffer {
  if (!/[\udc80-\udcff]/.test(s)) return Buffer.from(s, 'utf8');
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    // a low surrogate preceded by a high one is half of a real character, not an escaped byte
    const paired = i > 0 && s.charCodeAt(i - 1) >= 0xd800 && s.charCodeAt(i - 1) <= 0xdbff;
    if (code >= 0xdc80 && code <= 0xdcff && !paired) {
      parts.push(Buffer.from(s.slice(start, i), 'utf8'), Buffer.of(code - ESCAPE_BASE));
      start = i + 1;
    }
  }
  parts.push(Buffer.from(s.slice(start), 'utf8'));
  return Buffer.concat(parts);
}

/** Whether a gex string holds raw bytes that are not UTF-8 text (PHP's json_encode refuses them). */
export function hasRawBytes(s: string): boolean {
  return /(?<![\ud800-\udbff])[\udc80-\udcff]/.test(s);
}

/**
 * PHP 7.4 reading a string at a non-numeric offset (`$s['destination']`): a warning, then the
 * offset counts as 0, so the result is the first byte ('' for an empty string).
 */
export function phpStringWordOffset(s: string): string {
  return phpStringFromBytes(phpStringBytes(s).subarray(0, 1));
}
