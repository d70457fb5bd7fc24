import Database from 'better-sqlite3';
import { addressableIdProblem } from '../../src/store/addressable-id.js';

/**
 * The store refuses, at create, row ids that could never be addressed (`.`, `..`, NUL, over-long);
 * a store written before that rule, or another Storage API, may still hand them to the runner.
 * Rows are created under a harmless id and renamed here, in the SQLite file itself.
 */
export function creatableRowId(rowId: string, index: number): string {
  return addressableIdProblem(rowId) ? `planted-${index}` : rowId;
}

export function plantRowIds(storeFile: string, configId: string, rowIds: string[]): void {
  const db = new Database(storeFile);
  try {
    db.transaction(() => {
      for (const [i, rowId] of rowIds.entries()) {
        const placeholder = creatableRowId(rowId, i);
        if (placeholder === rowId) continue;
        db.prepare('UPDATE configuration_rows SET id = ? WHERE configuration_id = ? AND id = ?').run(
          rowId,
          configId,
          placeholder,
        );
        db.prepare('UPDATE row_versions SET row_id = ? WHERE configuration_id = ? AND row_id = ?').run(
          rowId,
          configId,
          placeholder,
        );
      }
    })();
  } finally {
    db.close();
  }
}
