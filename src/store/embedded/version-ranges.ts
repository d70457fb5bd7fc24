/**
 * How a configuration's custom row order (`rowsSortOrder`) goes from one version to the next, as
 * ranges of the configuration_version_row_order table to close and open. The common changes — a
 * row appended (row created or copied), a row removed (row deleted), nothing — touch only the rows
 * concerned; any other change (a new order set, a rollback) closes every range and opens the new
 * order afresh, which costs as much as the change itself.
 */
export type OrderChange =
  | { kind: 'same' }
  /** close the ranges of `removed`; open `appended`, in order, after the last open position */
  | { kind: 'edit'; removed: string[]; appended: string[] }
  /** close every open range; open `order` at positions 0, 1, … */
  | { kind: 'reset'; order: readonly string[] };

export function orderChange(before: readonly string[], after: readonly string[]): OrderChange {
  if (before.length === after.length && before.every((id, i) => id === after[i])) return { kind: 'same' };
  // back to the natural order: every range closes at once
  if (after.length === 0) return { kind: 'reset', order: after };
  const beforeSet = new Set(before);
  const afterSet = new Set(after);
  // a repeated id cannot be told apart by row id: start afresh (Keboola refuses such orders anyway)
  if (beforeSet.size !== before.length || afterSet.size !== after.length) return { kind: 'reset', order: after };
  const kept = before.filter((id) => afterSet.has(id));
  // an edit keeps the rows that stay in their order and puts the new ones after them
  if (!kept.every((id, i) => after[i] === id)) return { kind: 'reset', order: after };
  return { kind: 'edit', removed: before.filter((id) => !afterSet.has(id)), appended: after.slice(kept.length) };
}
