import { ConfigError } from '../../common/errors.js';
import { isNumericString, phpBool, phpEmpty, phpIntCast, phpToString, type JsonObject, type JsonValue } from '../../php-compat/index.js';

/** Reading pagination options with GE's PHP semantics (empty means default, `"false"` is true). */
export class PaginationOptions {
  constructor(
    readonly raw: JsonObject,
    readonly path: string,
  ) {}

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
  throw new ConfigError(path, `must be a non-negative integer, got ${JSON.stringify(phpToString(v))}`, 'Set the page size as a number, e.g. 100');
}
