import type { SqlExecutor } from '../sql/database.js';
import { insertBatches, selectSql } from '../sql/table.js';
import type { ConfigKey, HeldRowVersion, VersionOrderRange } from './records.js';
import {
  CONFIG_WHERE,
  CONFIGURATION_ROWS,
  CONFIGURATIONS,
  keyParams,
  OWNED_WHERE,
  ROW_VERSIONS,
  rowVersionFromDb,
  VERSION_ROW_ORDER,
  type DbRow,
} from './tables.js';

/** row versions that configuration version `?` holds (both placeholders take the version) */
const HELD_BY_VERSION = 'held_from <= ? AND (held_until IS NULL OR held_until >= ?)';
/** order entries of configuration version `?` (both placeholders take the version) */
const IN_ORDER_OF_VERSION = 'first_version <= ? AND (last_version IS NULL OR last_version >= ?)';

/**
 * The SQL of what each configuration version holds, kept as ranges of versions: the row versions
 * it holds (`held_from`..`held_until` of row_versions) and its custom row order (`first_version`..
 * `last_version` of version_row_order). Part of the Repository (`repo.holdings`), over its transaction.
 */
export class VersionHoldings {
  constructor(private readonly tx: SqlExecutor) {}

  /**
   * The row versions configuration version `version` holds, each with its row's `created`: two
   * reads of one table each, whose plans cannot go quadratic whatever the database's statistics.
   */
  async loadVersionRows(key: ConfigKey, version: number): Promise<HeldRowVersion[]> {
    const held = await this.tx.all<DbRow>(`${selectSql(ROW_VERSIONS)} WHERE ${OWNED_WHERE} AND ${HELD_BY_VERSION}`, [
      ...keyParams(key),
      version,
      version,
    ]);
    if (held.length === 0) return [];
    const created = new Map(
      (
        await this.tx.all<DbRow>(
          `SELECT id, created FROM ${CONFIGURATION_ROWS.name} WHERE ${OWNED_WHERE}`,
          keyParams(key),
        )
      ).map((r) => [String(r.id), String(r.created)]),
    );
    return held.map((r) => ({ ...rowVersionFromDb(r), rowCreated: created.get(String(r.row_id)) }));
  }

  /** The custom row order of configuration version `version`; [] for the natural order. */
  async loadVersionOrder(key: ConfigKey, version: number): Promise<string[]> {
    const rows = await this.tx.all<DbRow>(
      `SELECT row_id FROM ${VERSION_ROW_ORDER.name} WHERE ${OWNED_WHERE} AND ${IN_ORDER_OF_VERSION} ORDER BY position`,
      [...keyParams(key), version, version],
    );
    return rows.map((r) => String(r.row_id));
  }

  /** The JSON text of the custom order of the configuration's record as stored (before this transaction changes it); undefined when there is no record yet. */
  async storedSortOrderText(key: ConfigKey): Promise<string | undefined> {
    const row = await this.tx.get<DbRow>(
      `SELECT rows_sort_order FROM ${CONFIGURATIONS.name} WHERE ${CONFIG_WHERE}`,
      keyParams(key),
    );
    return row ? String(row.rows_sort_order) : undefined;
  }

  /** The last position of the current version's custom order; -1 when it has none. */
  async lastOrderPosition(key: ConfigKey): Promise<number> {
    const row = await this.tx.get<DbRow>(
      `SELECT max(position) AS last FROM ${VERSION_ROW_ORDER.name} WHERE ${OWNED_WHERE} AND last_version IS NULL`,
      keyParams(key),
    );
    return row?.last === null || row?.last === undefined ? -1 : Number(row.last);
  }

  async openOrderRanges(ranges: readonly VersionOrderRange[]): Promise<void> {
    for (const [sql, params] of insertBatches(VERSION_ROW_ORDER, ranges)) await this.tx.run(sql, params);
  }

  /** Ends at configuration version `lastVersion` the holding of the current row versions of `rowIds` (or of every row). */
  async closeHeldRowVersions(key: ConfigKey, lastVersion: number, rowIds: readonly string[] | 'all'): Promise<void> {
    await this.closeRanges(ROW_VERSIONS.name, 'held_until', key, lastVersion, rowIds);
  }

  /** Ends at configuration version `lastVersion` the places of `rowIds` (or of every row) in the custom order. */
  async closeOrderRanges(key: ConfigKey, lastVersion: number, rowIds: readonly string[] | 'all'): Promise<void> {
    await this.closeRanges(VERSION_ROW_ORDER.name, 'last_version', key, lastVersion, rowIds);
  }

  private async closeRanges(
    table: string,
    until: 'held_until' | 'last_version',
    key: ConfigKey,
    lastVersion: number,
    rowIds: readonly string[] | 'all',
  ): Promise<void> {
    // held_from: row versions never held by a configuration version have none (only in stores from before migration 6)
    const open = until === 'held_until' ? 'held_from IS NOT NULL AND held_until IS NULL' : 'last_version IS NULL';
    const close = `UPDATE ${table} SET ${until} = ? WHERE ${OWNED_WHERE} AND ${open}`;
    if (rowIds === 'all') {
      await this.tx.run(close, [lastVersion, ...keyParams(key)]);
      return;
    }
    for (const rowId of rowIds) await this.tx.run(`${close} AND row_id = ?`, [lastVersion, ...keyParams(key), rowId]);
  }
}
