import { excerptList, excerptQuoted } from '../../common/log-text.js';
import { StoreError } from '../../store/store-error.js';
import type { ListInclude, VersionListOptions } from '../../store/types.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/**
 * Query parameters of the list endpoints. Values are read leniently where clients differ (the PHP
 * client sends every parameter, empty ones included: `include=&isDeleted=0&componentType=`).
 */

export type Query = Record<string, string | string[] | undefined>;

/** One value of a parameter (the first when repeated); undefined when absent. */
export function queryValue(query: Query, name: string): string | undefined {
  const value = query[name];
  return Array.isArray(value) ? value[0] : value;
}

/** `a,b, c` → [a, b, c] (empty entries dropped). */
export function commaList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** `isDeleted`: true/false/1/0; absent or empty = false. */
export function isDeletedParam(query: Query): boolean | undefined {
  const value = queryValue(query, 'isDeleted')?.trim().toLowerCase();
  if (value === undefined || value === '') return undefined;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw StoreError.validation(
    `Invalid parameters - isDeleted: expected true, false, 1 or 0, got ${excerptQuoted(value)}.`,
  );
}

/** `componentType` filter; empty = all types. */
export function componentTypeParam(query: Query): string | undefined {
  const value = queryValue(query, 'componentType')?.trim();
  return value ? value : undefined;
}

const LIST_INCLUDES: readonly ListInclude[] = ['configuration', 'rows', 'state'];

/** `include` of the component list: a subset of configuration, rows, state; anything else is refused. */
export function listIncludeParam(query: Query): Set<ListInclude> {
  const values = commaList(queryValue(query, 'include') ?? '');
  const unknown = values.filter((v) => !(LIST_INCLUDES as readonly string[]).includes(v));
  if (unknown.length > 0) {
    const message = `Invalid include parameters: ${excerptList(unknown, (v) => excerptQuoted(v))}. Only following are allowed: ${LIST_INCLUDES.join(', ')}.`;
    throw StoreError.keboola(KEBOOLA_ERRORS.componentsValidation, `Invalid request: include: ${message}`, [
      { key: 'include', message },
    ]);
  }
  return new Set(values as ListInclude[]);
}

/**
 * A count up to 2^53 - 1, the largest a number holds exactly (and well below int64, where the
 * databases would fail); no store comes near it, so larger values are refused, not clamped.
 */
function countParam(query: Query, name: string): number | undefined {
  const value = queryValue(query, name)?.trim();
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value))
    throw StoreError.validation(
      `Invalid parameters - ${name}: expected a whole number ≥ 0, got ${excerptQuoted(value)}.`,
    );
  const count = Number(value);
  if (!Number.isSafeInteger(count)) {
    throw StoreError.validation(
      `Invalid parameters - ${name}: ${excerptQuoted(value, 40)} is too large; the largest accepted is ${Number.MAX_SAFE_INTEGER}.`,
    );
  }
  return count;
}

/**
 * `include`, `limit`, `offset` of version lists. An absent `include` means the store's default;
 * a present but empty one (`include=`, as the PHP client sends) means none. Unknown values are
 * passed on and ignored by the store, as Keboola ignores them.
 */
export function versionListParams(query: Query): VersionListOptions {
  const include = queryValue(query, 'include');
  return {
    include: include === undefined ? undefined : commaList(include),
    limit: countParam(query, 'limit'),
    offset: countParam(query, 'offset'),
  };
}

/** A version number in a path. */
export function versionParam(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) {
    throw StoreError.validation(
      `Invalid version ${excerptQuoted(text)} in the URL: a version is a whole number ≥ 1, as listed by …/versions.`,
    );
  }
  return Number(text);
}
