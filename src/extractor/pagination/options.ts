import { ConfigError } from '../../common/errors.js';
import { isJsonObject, isScalar, type JsonObject, type JsonValue } from '../../json/index.js';
import { isNumericString, phpBool, phpEmpty, phpIntCast, phpToString } from '../../php/index.js';

/** Reading pagination options with GE's PHP semantics (empty means default, `"false"` is true). */
export class PaginationOptions {
  constructor(
    readonly raw: JsonObject,
    readonly path: string,
  ) {}

  /** The JSON path of an option, for errors. */
  at(key: string): string {
    return `${this.path}.${key}`;
  }

  /** A required text option (PHP-empty counts as missing, as in GE). */
  required(key: string, fix: string): string {
    const v = this.raw.get(key);
    if (phpEmpty(v)) throw new ConfigError(this.at(key), 'is required', fix);
    if (!isScalar(v)) throw new ConfigError(this.at(key), `must be a string, got ${describeValue(v!)}`, fix);
    return phpToString(v);
  }

  /**
   * An option GE keeps in a PHP `int` property under strict types: a JSON integer, or off when
   * PHP-empty. Anything else is a TypeError in GE; gex reports it as a configuration error.
   */
  integer(key: string, fix: string): number | bigint | null {
    const v = this.raw.get(key);
    if (phpEmpty(v)) return null;
    if ((typeof v === 'number' && Number.isInteger(v)) || typeof v === 'bigint') return v;
    throw new ConfigError(this.at(key), `must be an integer, got ${describeValue(v!)}`, fix);
  }

  /** A nested options object (a stop condition, a scroller of `multiple`, scrollRequest); null when PHP-empty. */
  nested(key: string, fix: string): PaginationOptions | null {
    const v = this.raw.get(key);
    if (phpEmpty(v)) return null;
    if (Array.isArray(v)) return new PaginationOptions(new Map(v.map((x, i) => [String(i), x])), this.at(key));
    if (!isJsonObject(v)) throw new ConfigError(this.at(key), `must be an object, got ${describeValue(v!)}`, fix);
    return new PaginationOptions(v, this.at(key));
  }

  string(key: string, fallback: string): string {
    const v = this.raw.get(key);
    return phpEmpty(v) ? fallback : phpToString(v);
  }

  bool(key: string, fallback: boolean): boolean {
    const v = this.raw.get(key);
    return v === undefined || v === null ? fallback : phpBool(v);
  }

  int(key: string, fallback: number): number {
    const v = this.raw.get(key);
    return v === undefined || v === null ? fallback : phpIntCast(v);
  }

  /** A page size: null when absent/empty/0, else a non-negative integer. */
  limit(key = 'limit'): number | null {
    const v = this.raw.get(key);
    if (phpEmpty(v)) return null;
    return numericLimit(v!, `${this.path}.${key}`);
  }
}

/** A limit value from configuration or job params as an integer (`"2"` → 2), or a ConfigError. */
export function numericLimit(v: JsonValue, path: string): number {
  if (typeof v === 'number' && v >= 0) return v;
  if (typeof v === 'string' && isNumericString(v) && Number(v) >= 0) return Math.trunc(Number(v));
  throw new ConfigError(
    path,
    `must be a non-negative integer, got ${JSON.stringify(phpToString(v))}`,
    'Set the page size as a number, e.g. 100',
  );
}

/** A value as users wrote it, for error messages. */
export function describeValue(v: JsonValue): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v === null || typeof v === 'boolean') return String(v);
  if (isJsonObject(v)) return 'an object';
  if (Array.isArray(v)) return 'a list';
  return phpToString(v);
}
