import { createHash } from 'node:crypto';
import { formatFloat } from './float-format.js';
import { PhpFloat, type JsonValue } from './values.js';

/**
 * PHP `serialize()` of a decoded response value: objects are `stdClass`, lists are arrays,
 * string lengths are UTF-8 byte counts, floats use 17 significant digits (GE's JSON parser sets
 * `serialize_precision = 17`). Row ids and link hashes are md5 of this text.
 */
export function phpSerialize(v: JsonValue): string {
  const out: string[] = [];
  write(v, out, false);
  return out.join('');
}

/**
 * `serialize()` of a PHP array built from configuration: objects are arrays and integer-like
 * keys become integer keys (`i:0;`).
 */
export function phpSerializeArray(v: JsonValue): string {
  const out: string[] = [];
  write(v, out, true);
  return out.join('');
}

function write(v: JsonValue, out: string[], arrays: boolean): void {
  if (v === null) out.push('N;');
  else if (v === true) out.push('b:1;');
  else if (v === false) out.push('b:0;');
  else if (typeof v === 'number' || typeof v === 'bigint') out.push(`i:${v};`);
  else if (v instanceof PhpFloat) out.push(`d:${formatFloat(v.value, 17, 'E')};`);
  else if (typeof v === 'string') out.push(`s:${Buffer.byteLength(v)}:"${v}";`);
  else if (Array.isArray(v)) {
    out.push(`a:${v.length}:{`);
    for (let i = 0; i < v.length; i++) {
      out.push(`i:${i};`);
      write(v[i], out, arrays);
    }
    out.push('}');
  } else {
    out.push(arrays ? `a:${v.size}:{` : `O:8:"stdClass":${v.size}:{`);
    for (const [k, x] of v) {
      out.push(arrays && isIntegerKey(k) ? `i:${k};` : `s:${Buffer.byteLength(k)}:"${k}";`);
      write(x, out, arrays);
    }
    out.push('}');
  }
}

/** PHP turns array keys that are canonical decimal integers into integer keys. */
export function isIntegerKey(k: string): boolean {
  return /^(0|-?[1-9]\d*)$/.test(k) && Number.isSafeInteger(Number(k)) && k !== '-0';
}

export function md5Hex(text: string): string {
  return createHash('md5').update(text, 'utf8').digest('hex');
}
