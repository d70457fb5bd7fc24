/**
 * PHP's rendering of floats.
 *
 * PHP prints a float with a fixed number of significant digits (`precision`, 14 by default, used by
 * string casts; 17 for serialize()/json_encode() once GE's JSON parser raised
 * `serialize_precision`), rounding the exact binary value half-to-even, dropping trailing zeros
 * and switching to `1.0E+20` style when the exponent is < -4 or >= the precision. JavaScript's
 * `toPrecision` rounds exact ties up instead, so ties are detected and decided exactly.
 */

export interface Digits {
  /** significant digits without trailing zeros, at least one */
  digits: string;
  /** decimal exponent of the first digit */
  exp: number;
}

/** The shortest round-trip digits of |v| (what `String(v)` prints), without trailing zeros. */
function shortestDigits(abs: number): Digits {
  const s = String(abs);
  const e = s.indexOf('e');
  if (e >= 0) return normalise(parseExponential(s));
  const dot = s.indexOf('.');
  const intPart = dot < 0 ? s : s.slice(0, dot);
  const all = dot < 0 ? s : intPart + s.slice(dot + 1);
  const lead = all.search(/[1-9]/);
  // exponent of the first significant digit: digits before the point minus one, minus leading zeros
  return normalise({ digits: all.slice(lead), exp: intPart.length - 1 - lead });
}

/** The smallest normal double: below it precision thins out. */
const MIN_NORMAL = 2.2250738585072014e-308;

/** Rounds |v| (finite, non-zero) to `precision` significant digits, exact ties to even. */
export function significantDigits(v: number, precision: number): Digits {
  return roundToDigits(v, precision);
}

function roundToDigits(v: number, precision: number): Digits {
  const abs = Math.abs(v);
  // Up to 15 digits, a shortest round-trip form with no more digits than asked is the rounded
  // value: the exact binary value lies within half an ulp of it (relative 1.1e-16), far less than
  // half a unit of the 15th digit. At 16-17 digits that no longer holds, nor for subnormals, whose
  // ulp is 4.9e-324 whatever their size (5e-324 is 4.9406564584125E-324 in PHP, not 5.0E-324).
  if (precision <= 15 && abs >= MIN_NORMAL) {
    const shortest = shortestDigits(abs);
    if (shortest.digits.length <= precision) return shortest;
  }
  // One digit more than needed: the exact value is a tie only if that digit is a 5 that ends the
  // exact decimal expansion. toPrecision(p + 1) is itself correctly rounded, so a trailing 5 is
  // the only case that needs the exact expansion.
  const probe = parseExponential(abs.toExponential(precision));
  if (probe.digits.length === precision + 1 && probe.digits.endsWith('5') && isExactTie(abs, precision)) {
    const kept = probe.digits.slice(0, precision);
    const lastEven = Number(kept[kept.length - 1]) % 2 === 0;
    return normalise(lastEven ? { digits: kept, exp: probe.exp } : increment(kept, probe.exp));
  }
  return normalise(parseExponential(abs.toExponential(precision - 1)));
}

function parseExponential(s: string): Digits {
  const [mantissa, exponent] = s.split('e');
  return { digits: mantissa.replace('.', ''), exp: Number(exponent) };
}

function increment(digits: string, exp: number): Digits {
  const n = (BigInt(digits) + 1n).toString();
  return n.length > digits.length ? { digits: n.slice(0, digits.length), exp: exp + 1 } : { digits: n, exp };
}

function normalise(d: Digits): Digits {
  const digits = d.digits.replace(/0+$/, '');
  return { digits: digits === '' ? '0' : digits, exp: d.exp };
}

/** True when the exact binary value of `abs` has exactly `precision + 1` significant digits ending in 5. */
function isExactTie(abs: number, precision: number): boolean {
  const exact = exactDecimal(abs);
  const significant = exact.replace(/^0+/, '').replace(/0+$/, '');
  return significant.length === precision + 1 && significant.endsWith('5');
}

/** The exact decimal digits of a finite positive double (decimal point removed, position ignored). */
function exactDecimal(abs: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, abs);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exp2: number;
  if (biased === 0) exp2 = -1074;
  else {
    mantissa |= 1n << 52n;
    exp2 = biased - 1075;
  }
  if (exp2 >= 0) return (mantissa << BigInt(exp2)).toString();
  // m / 2^k = m * 5^k / 10^k: the digits of m * 5^k are the exact decimal digits
  return (mantissa * 5n ** BigInt(-exp2)).toString();
}

function layout(negative: boolean, d: Digits, precision: number, expChar: 'E' | 'e'): string {
  const sign = negative ? '-' : '';
  const { digits, exp } = d;
  if (exp < -4 || exp >= precision) {
    const rest = digits.length > 1 ? digits.slice(1) : '0';
    return `${sign}${digits[0]}.${rest}${expChar}${exp < 0 ? '-' : '+'}${Math.abs(exp)}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return sign + digits + '0'.repeat(exp + 1 - digits.length);
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

/**
 * Renders a float as PHP does. `precision` is the number of significant digits, or `'shortest'`
 * for PHP's `serialize_precision = -1` (the shortest string that round-trips, threshold 17).
 */
export function formatFloat(v: number, precision: number | 'shortest' = 14, expChar: 'E' | 'e' = 'E'): string {
  if (Number.isNaN(v)) return 'NAN';
  if (!Number.isFinite(v)) return v > 0 ? 'INF' : '-INF';
  const negative = v < 0 || Object.is(v, -0);
  if (v === 0) return negative ? '-0' : '0';
  if (precision === 'shortest') {
    return layout(negative, shortestDigits(Math.abs(v)), 17, expChar);
  }
  return plainShortest(v, precision) ?? roundedFloat(v, precision, expChar);
}

/** The general algorithm behind `formatFloat` for finite non-zero `v` (exported to test the shortcut against). */
export function roundedFloat(v: number, precision: number, expChar: 'E' | 'e' = 'E'): string {
  return layout(v < 0, roundToDigits(v, precision), precision, expChar);
}

/**
 * The common case without digit juggling: JavaScript's shortest form is plain (no exponent), within
 * PHP's plain range and has no more significant digits than asked. Up to 15 digits PHP then prints
 * exactly it; at 16–17 digits only when it is the double's exact value (as for prices like 12.25),
 * since otherwise the exact binary value shows further digits (0.1 → 0.10000000000000001).
 */
function plainShortest(v: number, precision: number): string | null {
  const abs = Math.abs(v);
  if (abs < 1e-4 || abs >= 1e15 || precision > 17) return null;
  const s = String(v);
  let first = v < 0 ? 1 : 0;
  if (abs < 1) {
    first += 2; // "0."
    while (s.charCodeAt(first) === 0x30) first++;
  }
  const dot = s.indexOf('.');
  const digits = s.length - first - (abs >= 1 && dot >= 0 ? 1 : 0);
  if (digits > Math.min(precision, 15)) return null;
  return precision <= 15 || isExactDecimal(s, dot) ? s : null;
}

/**
 * Whether the plain decimal `s` (at most 15 significant digits) is exactly a double's value:
 * n / 10^f is dyadic — what every double is — exactly when 5^f divides n.
 */
function isExactDecimal(s: string, dot: number): boolean {
  if (dot < 0) return true;
  const fraction = s.length - dot - 1;
  const n = Math.abs(Number(s.slice(0, dot) + s.slice(dot + 1)));
  return n % 5 ** fraction === 0;
}
