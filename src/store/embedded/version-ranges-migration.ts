import type { SqlExecutor } from '../sql/database.js';
import { insertBatches, type Table } from '../sql/table.js';
import type { ConfigKey, VersionOrderRange } from './records.js';
import { VERSION_ROW_ORDER } from './tables.js';
import { orderChange } from './version-ranges.js';

/**
 * The data step of schema migration 6. Until then every configuration version kept a JSON copy of
 * all its rows (`rows`: `[{id, version}]`) and of its custom order (`rows_sort_order`), so a
 * configuration of n rows built row by row stored n²/2 row references. This turns those lists into
 * what the store keeps since: on each row version, the range of configuration versions that hold
 * it (`held_from`, `held_until`), and ranges of the order's positions — and keeps every version's
 * answer as it was. One configuration at a time, its versions in small batches: memory holds one
 * configuration's rows, not its history.
 */
export async function versionListsToRanges(tx: SqlExecutor): Promise<void> {
  const keys = await tx.all<Record<string, unknown>>(
    'SELECT DISTINCT project_id, component_id, configuration_id FROM configuration_versions ORDER BY project_id, component_id, configuration_id',
  );
  for (const k of keys) {
    await migrateConfiguration(tx, {
      projectId: Number(k.project_id),
      componentId: String(k.component_id),
      configId: String(k.configuration_id),
    });
  }
}

/** Versions read per query: a version of a configuration with 10,000 rows held ~250 KB of list. */
const VERSIONS_PER_BATCH = 50;
/** Finished order ranges kept before they are written. */
const RANGES_PER_WRITE = 5000;

interface OpenRow {
  rowVersion: number;
  firstVersion: number;
}

interface OpenPosition {
  rowId: string;
  position: number;
  firstVersion: number;
}

async function migrateConfiguration(tx: SqlExecutor, key: ConfigKey): Promise<void> {
  const rows = new Map<string, OpenRow>();
  let order: OpenPosition[] = [];
  const orderRanges: VersionOrderRange[] = [];
  const endRow = (rowId: string, open: OpenRow, lastVersion: number | null) =>
    holdRowVersion(tx, key, rowId, open, lastVersion);
  const endPosition = (p: OpenPosition, lastVersion: number | null) => orderRanges.push({ ...key, ...p, lastVersion });

  let previous = 0;
  for (;;) {
    const batch = await tx.all<Record<string, unknown>>(
      'SELECT version, rows, rows_sort_order FROM configuration_versions WHERE project_id = ? AND component_id = ? AND configuration_id = ? AND version > ? ORDER BY version LIMIT ?',
      [key.projectId, key.componentId, key.configId, previous, VERSIONS_PER_BATCH],
    );
    if (batch.length === 0) break;
    for (const stored of batch) {
      const version = Number(stored.version);
      const held = heldRows(stored.rows, key, version);
      // rows changed or gone end with the previous version; new and changed ones start here
      for (const [rowId, open] of rows) {
        if (held.get(rowId) !== open.rowVersion) {
          await endRow(rowId, open, previous);
          rows.delete(rowId);
        }
      }
      for (const [rowId, rowVersion] of held)
        if (!rows.has(rowId)) rows.set(rowId, { rowVersion, firstVersion: version });

      const change = orderChange(
        order.map((p) => p.rowId),
        sortOrder(stored.rows_sort_order, key, version),
      );
      if (change.kind === 'reset') {
        for (const p of order) endPosition(p, previous);
        order = change.order.map((rowId, position) => ({ rowId, position, firstVersion: version }));
      } else if (change.kind === 'edit') {
        const removed = new Set(change.removed);
        for (const p of order) if (removed.has(p.rowId)) endPosition(p, previous);
        const last = order.length === 0 ? -1 : order[order.length - 1].position;
        order = [
          ...order.filter((p) => !removed.has(p.rowId)),
          ...change.appended.map((rowId, i) => ({ rowId, position: last + 1 + i, firstVersion: version })),
        ];
      }
      previous = version;
    }
    if (orderRanges.length >= RANGES_PER_WRITE) await insertAll(tx, VERSION_ROW_ORDER, orderRanges.splice(0));
  }
  for (const [rowId, open] of rows) await endRow(rowId, open, null);
  for (const p of order) endPosition(p, null);
  await insertAll(tx, VERSION_ROW_ORDER, orderRanges);
}

/**
 * Records on a row version the configuration versions that hold it. Each row version is held by
 * one unbroken run of versions (every change makes a new row version); a store where one came
 * back after it was let go cannot be kept as it was, and is refused. A row version the lists name
 * but the store lacks stays missing, as it was (versions never showed it).
 */
async function holdRowVersion(
  tx: SqlExecutor,
  key: ConfigKey,
  rowId: string,
  open: OpenRow,
  lastVersion: number | null,
): Promise<void> {
  const where = 'project_id = ? AND component_id = ? AND configuration_id = ? AND row_id = ? AND version = ?';
  const params = [key.projectId, key.componentId, key.configId, rowId, open.rowVersion];
  const { changes } = await tx.run(
    `UPDATE row_versions SET held_from = ?, held_until = ? WHERE ${where} AND held_from IS NULL`,
    [open.firstVersion, lastVersion, ...params],
  );
  if (changes === 0 && (await tx.get(`SELECT 1 AS found FROM row_versions WHERE ${where}`, params))) {
    throw unreadable(
      key,
      open.firstVersion,
      `version ${open.rowVersion} of row ${JSON.stringify(rowId)} again after earlier versions let it go`,
    );
  }
}

async function insertAll<R>(tx: SqlExecutor, table: Table<R>, records: R[]): Promise<void> {
  for (const [sql, params] of insertBatches(table, records)) await tx.run(sql, params);
}

function unreadable(key: ConfigKey, version: number, what: string): Error {
  return new Error(
    `Cannot migrate the store: version ${version} of configuration ${JSON.stringify(key.configId)} (component ${JSON.stringify(key.componentId)}) ` +
      `has ${what}. The store is unchanged (the migration rolled back); restore it from a backup or report this.`,
  );
}

/** A version's stored `rows`: row id → row version. */
function heldRows(text: unknown, key: ConfigKey, version: number): Map<string, number> {
  const list = parseJson(text);
  if (!Array.isArray(list)) throw unreadable(key, version, 'a row list that is not a JSON list');
  const held = new Map<string, number>();
  for (const ref of list) {
    const id = (ref as { id?: unknown } | null)?.id;
    const rowVersion = (ref as { version?: unknown } | null)?.version;
    if (typeof id !== 'string' || typeof rowVersion !== 'number' || !Number.isInteger(rowVersion))
      throw unreadable(key, version, 'a row list entry without a string id and an integer version');
    held.set(id, rowVersion);
  }
  return held;
}

/** A version's stored `rows_sort_order`. */
function sortOrder(text: unknown, key: ConfigKey, version: number): string[] {
  const list = parseJson(text);
  if (!Array.isArray(list) || !list.every((id) => typeof id === 'string'))
    throw unreadable(key, version, 'a rowsSortOrder that is not a JSON list of ids');
  return list;
}

function parseJson(text: unknown): unknown {
  try {
    return JSON.parse(String(text));
  } catch {
    return undefined;
  }
}
