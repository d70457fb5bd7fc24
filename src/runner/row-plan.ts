import { UserError } from '../common/errors.js';
import { displayId, displayOption, displayText, quoteForLog } from '../common/log-text.js';
import type { Configuration, Row } from '../store/types.js';

export interface PlannedRow {
  row: Row;
  /** a disabled row named with --row-id */
  forced: boolean;
}

export interface RowPlan {
  /** rows to run, in the order of `rows` (as `rowsSortOrder` sets it) */
  run: PlannedRow[];
  skipped: Array<{ row: Row; reason: string }>;
}

/**
 * Which rows run (Keboola's runner, docs/design.md#rows-and-their-order): all enabled rows in the configuration's
 * order; with `rowIds` only those — disabled ones too — still in the configuration's order. An
 * unknown id is a user error that lists the existing ones.
 */
export function planRows(configuration: Configuration, rowIds: string[]): RowPlan {
  const rows = configuration.rows;
  if (rowIds.length > 0) {
    const known = new Set(rows.map((r) => r.id));
    const unknown = rowIds.filter((id) => !known.has(id));
    if (unknown.length > 0) {
      const existing = rows.length
        ? rows.map((r) => `${displayId(r.id)}${r.name ? ` (${displayText(r.name)})` : ''}`).join(', ')
        : 'none';
      throw new UserError(
        'GEX_ROW_NOT_FOUND',
        `Row${unknown.length > 1 ? 's' : ''} ${unknown.map(quoteForLog).join(', ')} not found in configuration ${displayId(configuration.id)}. Existing rows: ${existing}.`,
      );
    }
    const wanted = new Set(rowIds);
    return {
      run: rows.filter((r) => wanted.has(r.id)).map((row) => ({ row, forced: row.isDisabled })),
      skipped: rows.filter((r) => !wanted.has(r.id)).map((row) => ({ row, reason: 'not selected with --row-id' })),
    };
  }
  return {
    run: rows.filter((r) => !r.isDisabled).map((row) => ({ row, forced: false })),
    skipped: rows
      .filter((r) => r.isDisabled)
      .map((row) => ({ row, reason: `disabled (run it anyway with ${displayOption('--row-id', row.id)})` })),
  };
}
