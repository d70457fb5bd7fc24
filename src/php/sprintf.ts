import { phpStringFromBytes } from './byte-string.js';
import { formatFloat, significantDigits } from './float-format.js';
import { isJsonObject, JsonFloat, type JsonValue } from '../json/value.js';
import { phpLeadingNumber, phpToString } from './casts.js';

/**
 * PHP 7.4 `sprintf` (ext/standard/formatted_print.c): `%[argnum$][flags][width][.precision]spec`,
 * flags `-` (left), `+` (sign), `0`/space/`'c` (padding); strings count in UTF-16 units here. Arguments convert as PHP converts them:
 * `%s` prints a float with 14 significant digits (0.30000000000000004 → 0.3, 1e17 → 1.0E+17),
 * `%d` wraps floats beyond int64 around, `%e`/`%f` round the exact binary value half to even,
 * `%g` is PHP's own (1e15 → 1.0e+15). Returns false where PHP does (too few arguments, argument 0).
 */
export function phpSprintf(format: string, args: readonly JsonValue[]): string | false {
  const spec = /%(?:(\d+)\$)?((?:[-+ 0]|'[\s\S])*)(\d*)(?:\.(\d*))?l?([\s\S]?)/gy;
  let out = '';
  let next = 0;
  let pos = 0;
  while (pos < format.length) {
    const percent = format.indexOf('%', pos);
    if (percent < 0) return out + format.slice(pos);
    out += format.slice(pos, percent);
    if (format[percent + 1] === '%') {
      out += '%';
      pos = percent + 2;
      continue;
    }
    spec.lastIndex = percent;
    const m = spec.exec(format)!;
    pos = spec.lastIndex;
    const [, argnum, flags, width, precision, conversion] = m;
    if (conversion === '%') {
      out += '%';
      continue;
    }
    let index: number;
    if (argnum !== undefined) {
      index = Number(argnum) - 1;
      if (index < 0) return false;
    } else index = next++;
    if (index >= args.length) return false;
    if (conversion === '') return out; // a lone % at the end still wants an argument
    const options: Options = {
      left: false,
      sign: false,
      pad: ' ',
      width: Number(width || 0),
      precision: precision === undefined || precision === '' ? null : Number(precision),
    };
    for (let i = 0; i < flags.length; i++) {
      const f = flags[i];
      if (f === '-') options.left = true;
      else if (f === '+') options.sign = true;
      else if (f === "'") options.pad = flags[++i];
      else options.pad = f;
    }
    out += convert(conversion, args[index], options);
  }
  return out;
}

interface Options {
  left: boolean;
  sign: boolean;
  pad: string;
  width: number;
  /** null: not given (`%.f` gives none either) */
  precision: number | null;
}

function convert(conversion: string, arg: JsonValue, o: Options): string {
  switch (conversion) {
    case 's': {
      const s = stringOf(arg);
      return pad(o.precision === null ? s : s.slice(0, o.precision), { ...o, sign: false }, false);
    }
    case 'd': {
      const n = longOf(arg);
      const s = n < 0n ? String(n) : (o.sign ? '+' : '') + String(n);
      return pad(s, { ...o, pad: o.left && o.pad === '0' ? ' ' : o.pad }, n < 0n);
    }
    case 'u':
      return pad(
        String(BigInt.asUintN(64, longOf(arg))),
        { ...o, sign: false, pad: o.left && o.pad === '0' ? ' ' : o.pad },
        false,
      );
    case 'b':
    case 'o':
    case 'x':
    case 'X': {
      const s = BigInt.asUintN(64, longOf(arg)).toString({ b: 2, o: 8, x: 16, X: 16 }[conversion]);
      return pad(conversion === 'X' ? s.toUpperCase() : s, { ...o, sign: false }, false);
    }
    case 'c':
      return phpStringFromBytes(Uint8Array.of(Number(BigInt.asUintN(8, longOf(arg)))));
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G':
      return formatDouble(conversion, doubleOf(arg), o);
    default:
      return ''; // an unknown conversion prints nothing (its argument is used up)
  }
}

/**
 * PHP's padding: to `width` with the pad character, on the left unless left-aligned; a sign moves
 * in front of zero padding. The precision never pads.
 */
function pad(s: string, o: Options, negative: boolean): string {
  const count = Math.max(0, o.width - s.length);
  if (o.left) return s + o.pad.repeat(count);
  // the sign takes the first character's place (PHP's "INF" with a sign and zeros becomes "-NF")
  if ((negative || o.sign) && o.pad === '0') return (negative ? '-' : '+') + '0'.repeat(count) + s.slice(1);
  return o.pad.repeat(count) + s;
}

function formatDouble(conversion: string, v: number, o: Options): string {
  const precision = o.precision === null ? 6 : Math.min(o.precision, 53);
  // PHP prints these three characters without padding to the width (and loses the minus sign)
  if (Number.isNaN(v)) return pad('NaN', { ...o, width: 3 }, false);
  if (!Number.isFinite(v)) return pad('INF', { ...o, width: 3 }, v < 0);
  let body: string;
  let negative: boolean;
  if (conversion === 'g' || conversion === 'G') {
    body = formatFloat(v, precision === 0 ? 1 : precision, conversion === 'g' ? 'e' : 'E');
    negative = body.startsWith('-');
  } else {
    // -0.0 prints without its sign here
    negative = v < 0;
    const abs = Math.abs(v);
    body =
      (negative ? '-' : '') +
      (conversion === 'f' || conversion === 'F' ? fixed(abs, precision) : exponential(abs, precision, conversion));
  }
  if (!negative && o.sign) body = '+' + body;
  return pad(body, o, negative);
}

/** `abs` with `decimals` digits after the point, the exact binary value rounded half to even. */
function fixed(abs: number, decimals: number): string {
  const { mantissa, exp2 } = binary(abs);
  let scaled: bigint;
  const num = mantissa * 10n ** BigInt(decimals);
  if (exp2 >= 0) scaled = num << BigInt(exp2);
  else {
    const den = 1n << BigInt(-exp2);
    scaled = num / den;
    const twice = (num % den) * 2n;
    if (twice > den || (twice === den && scaled % 2n === 1n)) scaled++;
  }
  const digits = scaled.toString().padStart(decimals + 1, '0');
  return decimals === 0 ? digits : `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
}

/** `d.ddde+X` with `decimals` digits after the point; the exponent has no leading zeros. */
function exponential(abs: number, decimals: number, conversion: string): string {
  const e = conversion === 'E' ? 'E' : 'e';
  if (abs === 0) return `0${decimals > 0 ? '.' + '0'.repeat(decimals) : ''}${e}+0`;
  const { digits, exp } = significantDigits(abs, decimals + 1);
  const all = digits.padEnd(decimals + 1, '0');
  return `${all[0]}${decimals > 0 ? '.' + all.slice(1) : ''}${e}${exp < 0 ? '-' : '+'}${Math.abs(exp)}`;
}

function binary(abs: number): { mantissa: bigint; exp2: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, abs);
  const biased = (view.getUint32(0) >>> 20) & 0x7ff;
  const fraction = (BigInt(view.getUint32(0) & 0xfffff) << 32n) | BigInt(view.getUint32(4));
  return biased === 0 ? { mantissa: fraction, exp2: -1074 } : { mantissa: fraction | (1n << 52n), exp2: biased - 1075 };
}

function stringOf(v: JsonValue): string {
  if (Array.isArray(v) || isJsonObject(v)) return 'Array';
  return phpToString(v);
}

/** PHP's conversion to int: floats truncated, wrapped around beyond int64 (INF and NAN give 0). */
function longOf(v: JsonValue): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt.asIntN(64, BigInt(Math.trunc(v)));
  if (v instanceof JsonFloat) return Number.isFinite(v.value) ? BigInt.asIntN(64, BigInt(Math.trunc(v.value))) : 0n;
  if (typeof v === 'string') {
    const m = /^[ \t\n\r\v\f]*[+-]?\d+(?![.eE\d])/.exec(v);
    const integer = m ? BigInt(m[0].trim()) : null;
    if (integer !== null && integer === BigInt.asIntN(64, integer)) return integer;
    return longOf(new JsonFloat(doubleOf(v)));
  }
  if (Array.isArray(v)) return v.length > 0 ? 1n : 0n;
  if (isJsonObject(v)) return 1n;
  return v === true ? 1n : 0n;
}

/** PHP's conversion to float: a string's leading number (0 when it has none). */
function doubleOf(v: JsonValue): number {
  if (v instanceof JsonFloat) return v.value;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string') return phpLeadingNumber(v);
  if (Array.isArray(v)) return v.length > 0 ? 1 : 0;
  if (isJsonObject(v)) return 1;
  return v === true ? 1 : 0;
}
