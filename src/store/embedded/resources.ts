import type { Configuration, Row, RowVersion } from '../types.js';
import { fromText, type ConfigRecord, type RowRecord, type RowVersionRecord } from './records.js';

/** The Storage API resources built from the store's records. */

/** Effective row order: `rowsSortOrder` when set (unknown ids skipped, missing ones appended), else by id. */
export function orderRows<T extends { rowId: string }>(rows: T[], sortOrder: string[]): T[] {
  const byId = [...rows].sort((a, b) => (a.rowId < b.rowId ? -1 : a.rowId > b.rowId ? 1 : 0));
  if (sortOrder.length === 0) return byId;
  const index = new Map(sortOrder.map((id, i) => [id, i]));
  return byId.sort((a, b) => (index.get(a.rowId) ?? Infinity) - (index.get(b.rowId) ?? Infinity));
}

export function toRow(r: RowRecord): Row {
  return {
    id: r.rowId,
    name: r.name,
    description: r.description,
    isDisabled: r.isDisabled,
    configuration: fromText(r.configuration),
    state: fromText(r.state),
    version: r.current.version,
    created: r.created,
    creatorToken: r.creator,
    changeDescription: r.current.changeDescription,
    versionIdentifier: r.current.versionIdentifier,
  };
}

/** A configuration with its live rows. */
export function toConfiguration(c: ConfigRecord, rows: RowRecord[]): Configuration {
  return {
    id: c.configId,
    name: c.name,
    description: c.description,
    created: c.created,
    creatorToken: c.creator,
    version: c.current.version,
    changeDescription: c.current.changeDescription,
    isDisabled: c.isDisabled,
    isDeleted: c.isDeleted,
    configuration: fromText(c.configuration),
    rowsSortOrder: c.rowsSortOrder,
    rows: orderRows(rows, c.rowsSortOrder).map(toRow),
    state: fromText(c.state),
    currentVersion: {
      created: c.current.created,
      creatorToken: c.current.token,
      changeDescription: c.current.changeDescription,
      versionIdentifier: c.current.versionIdentifier,
    },
  };
}

export function toRowVersion(v: RowVersionRecord, withConfiguration: boolean): RowVersion {
  const item: RowVersion = {
    version: v.version,
    name: v.name,
    description: v.description,
    isDisabled: v.isDisabled,
    created: v.created,
    creatorToken: v.token,
    changeDescription: v.changeDescription,
    versionIdentifier: v.versionIdentifier,
  };
  if (withConfiguration) item.configuration = fromText(v.configuration);
  return item;
}
