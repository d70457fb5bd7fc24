import { requireAddressableId } from '../addressable-id.js';
import { StoreError } from '../store-error.js';
import type { CreateRowInput, Row, UpdateRowInput } from '../types.js';
import type { ConfigKey, RowRecord } from './records.js';
import { orderRows, toRow } from './resources.js';
import type { ProjectSession } from './session.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/** A configuration's rows: list, create, read, update, delete. Every row change is a configuration version too. */

export function listRows(s: ProjectSession, componentId: string, configId: string): Promise<Row[]> {
  return s.read(async (repo) => {
    const record = await s.liveConfig(repo, s.key(componentId, configId));
    return orderRows(await repo.loadRows(record), record.rowsSortOrder).map(toRow);
  });
}

export function createRow(
  s: ProjectSession,
  componentId: string,
  configId: string,
  input: CreateRowInput,
): Promise<Row> {
  if (input.rowId) requireAddressableId(input.rowId, 'rowId', KEBOOLA_ERRORS.componentsRowsValidation.code);
  return s.write(async (repo, now) => {
    const key = s.key(componentId, configId);
    const record = await s.lockLiveConfig(repo, key);
    const rowId = input.rowId || (await s.newId(repo, 'row', async (id) => Boolean(await repo.loadRow(key, id))));
    const row = newRow(s, key, rowId, input, now, await repo.loadRow(key, rowId));
    const changeDescription = input.changeDescription ?? `Row ${rowId} added`;
    s.nextRowVersion(row, now, changeDescription);
    if (record.rowsSortOrder.length > 0) record.rowsSortOrder = [...record.rowsSortOrder, rowId];
    await s.commitVersion(repo, record, now, changeDescription, { entered: [row] });
    return toRow(row);
  });
}

/**
 * The record of a row created now from `input` (not yet saved, at the version before its first).
 * `existing` is the stored row of that id: a live one is a conflict; a deleted one's id is reused
 * and its version counter continues.
 */
export function newRow(
  s: ProjectSession,
  key: ConfigKey,
  rowId: string,
  input: CreateRowInput,
  now: string,
  existing: RowRecord | undefined,
): RowRecord {
  if (existing && !existing.isDeleted) {
    throw StoreError.keboola(
      KEBOOLA_ERRORS.configurationRowAlreadyExists,
      `Row ${rowId} already exists in configuration ${key.configId}.`,
    );
  }
  const configuration = s.body(key.componentId, input.configuration ?? new Map(), 'configuration');
  const state = s.body(key.componentId, input.state ?? new Map(), 'state');
  const content = {
    name: input.name ?? '',
    description: input.description ?? '',
    configuration,
    isDisabled: input.isDisabled ?? false,
  };
  return s.newRowRecord(key, rowId, content, now, { current: existing?.current, state });
}

export function getRow(s: ProjectSession, componentId: string, configId: string, rowId: string): Promise<Row> {
  return s.read(async (repo) => {
    const key = s.key(componentId, configId);
    await s.liveConfig(repo, key);
    return toRow(await s.liveRow(repo, key, rowId));
  });
}

/**
 * Sending name, description or isDisabled makes a new version (Keboola's newest behaviour);
 * a configuration is compared with the stored one; state never makes a version.
 */
export function updateRow(
  s: ProjectSession,
  componentId: string,
  configId: string,
  rowId: string,
  input: UpdateRowInput,
): Promise<Row> {
  return s.write(async (repo, now) => {
    const key = s.key(componentId, configId);
    const record = await s.lockLiveConfig(repo, key);
    const row = await s.liveRow(repo, key, rowId);
    const configuration =
      input.configuration === undefined
        ? row.configuration
        : s.body(componentId, input.configuration, 'configuration', row.configuration);
    const changed =
      input.name !== undefined ||
      input.description !== undefined ||
      input.isDisabled !== undefined ||
      configuration !== row.configuration;
    const next: RowRecord = {
      ...row,
      name: input.name ?? row.name,
      description: input.description ?? row.description,
      isDisabled: input.isDisabled ?? row.isDisabled,
      configuration,
      state: input.state === undefined ? row.state : s.body(componentId, input.state, 'state', row.state),
    };
    if (changed) {
      const changeDescription = input.changeDescription ?? `Row ${rowId} changed`;
      s.nextRowVersion(next, now, changeDescription);
      await s.commitVersion(repo, record, now, changeDescription, { entered: [next] });
    } else if (next.state !== row.state) await repo.saveRowState(key, rowId, next.state);
    return toRow(next);
  });
}

export async function deleteRow(
  s: ProjectSession,
  componentId: string,
  configId: string,
  rowId: string,
  changeDescription?: string,
): Promise<void> {
  await s.write(async (repo, now) => {
    const key = s.key(componentId, configId);
    const record = await s.lockLiveConfig(repo, key);
    const row = await s.liveRow(repo, key, rowId);
    // the row keeps its state and version counter for a later rollback or re-creation
    await repo.saveRow({ ...row, isDeleted: true });
    record.rowsSortOrder = record.rowsSortOrder.filter((id) => id !== rowId);
    await s.commitVersion(repo, record, now, changeDescription ?? `Row ${rowId} deleted`, { left: [rowId] });
  });
}
