import { isJsonObject, stringifyExact, type JsonValue } from '../../json/index.js';
import { formatPath, type PathStep } from './json-path.js';

/** One place where two JSON values differ: absent `before` = added, absent `after` = removed. */
export interface Difference {
  path: PathStep[];
  before?: JsonValue;
  after?: JsonValue;
}

/**
 * Where `after` differs from `before` — the deepest objects' keys and list items that differ — at
 * most `limit` + 1 of them (the walk stops there).
 */
export function differences(
  before: JsonValue | undefined,
  after: JsonValue | undefined,
  limit = Number.POSITIVE_INFINITY,
  at: PathStep[] = [],
  found: Difference[] = [],
): Difference[] {
  if (found.length > limit) return found;
  if (before !== undefined && after !== undefined && stringifyExact(before) === stringifyExact(after)) return found;
  if (isJsonObject(before) && isJsonObject(after)) {
    for (const key of new Set([...before.keys(), ...after.keys()]))
      differences(before.get(key), after.get(key), limit, [...at, key], found);
  } else if (Array.isArray(before) && Array.isArray(after)) {
    for (let i = 0; i < Math.max(before.length, after.length); i++)
      differences(before[i], after[i], limit, [...at, i], found);
  } else found.push({ path: at, before, after });
  return found;
}

/** Paths (deepest objects' keys, list items) where `after` differs from `before`, at most `limit` + 1. */
export function changedPaths(before: JsonValue | undefined, after: JsonValue | undefined, limit = 5): string[] {
  return differences(before, after, limit).map((d) => (d.path.length ? formatPath(d.path) : 'the whole body'));
}

/** "parameters.api.baseUrl, parameters.config.jobs[0] and 3 more" (never values: they may be secrets). */
export function describeChanges(before: JsonValue, after: JsonValue): string {
  const paths = changedPaths(before, after, 50);
  const shown = paths.slice(0, 3).map((p) => (p.length > 80 ? `${p.slice(0, 77)}...` : p));
  return paths.length > 3
    ? `${shown.join(', ')} and ${paths.length - 3}${paths.length > 50 ? '+' : ''} more`
    : shown.join(', ');
}
