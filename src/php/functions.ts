import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { createRequire } from 'node:module';
import type gmdateFn from 'locutus/php/datetime/gmdate.js';
import type strtotimeFn from 'locutus/php/datetime/strtotime.js';
import { phpStringBytes, phpStringFromBytes } from './byte-string.js';
import { phpUrlencode } from './query-string.js';
import { phpSprintf } from './sprintf.js';
import { isJsonObject, JsonFloat, type JsonValue } from '../json/value.js';
import { phpEmpty, phpToString } from './casts.js';

/**
 * The PHP functions Generic Extractor's user functions may call (keboola/codebuilder), with PHP
 * 7.4 behaviour in the UTC timezone GE runs with. `date` and `strtotime` are locutus' ports of
 * PHP's own, `sprintf` is ours (sprintf.ts); the rest is Node's crypto.
 */

export class PhpFunctionError extends Error {}

// locutus is CommonJS; loaded on first use, as most runs call no user function (~20 ms of start-up)
const require = createRequire(import.meta.url);
const gmdate: typeof gmdateFn = (...args) => (require('locutus/php/datetime/gmdate.js') as typeof gmdateFn)(...args);
const strtotime: typeof strtotimeFn = (...args) =>
  (require('locutus/php/datetime/strtotime.js') as typeof strtotimeFn)(...args);

function str(fn: string, v: JsonValue | undefined, position: number): string {
  if (v !== undefined && v !== null && (Array.isArray(v) || isJsonObject(v))) {
    throw new PhpFunctionError(`${fn}() expects parameter ${position} to be string, array given`);
  }
  return phpToString(v);
}

/** A string argument as the bytes PHP hashes or encodes (raw digests included). */
function bytes(fn: string, v: JsonValue | undefined, position: number): Buffer {
  return phpStringBytes(str(fn, v, position));
}

/**
 * Hex digits, or with a true `raw_output`/`binary` argument (PHP's bool coercion: `1`, `"false"`
 * count as true) the raw digest bytes as a byte string that later functions get back byte for byte.
 */
function digestOf(hash: Hash | Hmac, rawOutput: JsonValue | undefined): string {
  return phpEmpty(rawOutput) ? hash.digest('hex') : phpStringFromBytes(hash.digest());
}

function num(v: JsonValue | undefined): number {
  if (v instanceof JsonFloat) return v.value;
  if (typeof v === 'bigint') return Number(v);
  return Number(phpToString(v) || 0);
}

function arity(fn: string, args: JsonValue[], min: number, max: number): void {
  if (args.length < min)
    throw new PhpFunctionError(
      `${fn}() expects at least ${min} parameter${min === 1 ? '' : 's'}, ${args.length} given`,
    );
  if (args.length > max)
    throw new PhpFunctionError(`${fn}() expects at most ${max} parameter${max === 1 ? '' : 's'}, ${args.length} given`);
}

const HASHES = new Set([
  'md5',
  'sha1',
  'sha224',
  'sha256',
  'sha384',
  'sha512',
  'sha512/224',
  'sha512/256',
  'sha3-224',
  'sha3-256',
  'sha3-384',
  'sha3-512',
  'ripemd160',
  'whirlpool',
]);

function algorithm(fn: string, name: string): string {
  const algo = name.toLowerCase();
  if (!HASHES.has(algo)) throw new PhpFunctionError(`${fn}(): Unknown hashing algorithm: ${name}`);
  return algo;
}

function elements(v: JsonValue | undefined): JsonValue[] | null {
  if (Array.isArray(v)) return v;
  if (isJsonObject(v)) return [...v.values()];
  return null;
}

type PhpFunction = (args: JsonValue[]) => JsonValue;

export const PHP_FUNCTIONS: Record<string, PhpFunction> = {
  md5: (a) => (arity('md5', a, 1, 2), digestOf(createHash('md5').update(bytes('md5', a[0], 1)), a[1])),
  sha1: (a) => (arity('sha1', a, 1, 2), digestOf(createHash('sha1').update(bytes('sha1', a[0], 1)), a[1])),
  base64_encode: (a) => (arity('base64_encode', a, 1, 1), bytes('base64_encode', a[0], 1).toString('base64')),
  time: (a) => (arity('time', a, 0, 0), Math.floor(Date.now() / 1000)),
  date: (a) => {
    arity('date', a, 1, 2);
    return gmdate(str('date', a[0], 1), a.length > 1 ? Math.trunc(num(a[1])) : Math.floor(Date.now() / 1000));
  },
  strtotime: (a) => {
    arity('strtotime', a, 1, 2);
    const result = strtotime(
      str('strtotime', a[0], 1),
      a.length > 1 ? Math.trunc(num(a[1])) : Math.floor(Date.now() / 1000),
    );
    return result === false ? false : result;
  },
  hash_hmac: (a) => {
    arity('hash_hmac', a, 3, 4);
    const hmac = createHmac(algorithm('hash_hmac', str('hash_hmac', a[0], 1)), bytes('hash_hmac', a[2], 3));
    return digestOf(hmac.update(bytes('hash_hmac', a[1], 2)), a[3]);
  },
  hash: (a) => {
    arity('hash', a, 2, 3);
    return digestOf(createHash(algorithm('hash', str('hash', a[0], 1))).update(bytes('hash', a[1], 2)), a[2]);
  },
  sprintf: (a) => {
    arity('sprintf', a, 1, Infinity);
    // PHP 7.4 warns and returns false (too few arguments): GE sends false and the run goes on
    return phpSprintf(str('sprintf', a[0], 1), a.slice(1));
  },
  implode: (a) => {
    arity('implode', a, 1, 2);
    // implode(glue, pieces); PHP also accepts implode(pieces) and the legacy implode(pieces, glue)
    const [first, second] = a;
    const pieces = elements(second) ?? elements(first);
    const glue = elements(second) ? str('implode', first, 1) : a.length > 1 ? str('implode', second, 2) : '';
    if (!pieces) throw new PhpFunctionError('implode(): Argument must be an array');
    return pieces.map((p) => phpToString(p)).join(glue);
  },
  concat: (a) => a.map((v, i) => str('concat', v, i + 1)).join(''),
  ifempty: (a) => {
    if (a.length !== 2) throw new PhpFunctionError("Bad argument count for function 'ifempty'!");
    return phpEmpty(a[0], false) ? a[1] : a[0];
  },
  urlencode: (a) => (arity('urlencode', a, 1, 1), phpUrlencode(str('urlencode', a[0], 1))),
};
