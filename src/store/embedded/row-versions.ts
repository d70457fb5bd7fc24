import type { Row, RowVersion, VersionListOptions } from '../types.js';
import { toRow, toRowVersion } from './resources.js';
import type { ProjectSession } from './session.js';

/** A row's history: its versions, rollback to one, and a new row copied from one. */

export function listRowVersions(
  s: ProjectSession,
  componentId: string,
  configId: string,
  rowId: string,
  options: VersionListOptions = {},
): Promise<RowVersion[]> {
  const withConfiguration = (options.include ?? ['configuration']).includes('configuration');
  return s.read(async (repo) => {
    const key = s.key(componentId, configId);
    await s.liveConfig(repo, key);
    await s.liveRow(repo, key, rowId);
    const versions = await repo.listRowVersions(key, rowId, options.limit ?? 100, options.offset ?? 0);
    return versions.map((v) => toRowVersion(v, withConfiguration));
  });
}

export function getRowVersion(
  s: ProjectSession,
  componentId: string,
  configId: string,
  rowId: string,
  version: number,
): Promise<RowVersion> {
  return s.read(async (repo) => {
    const key = s.key(componentId, configId);
    await s.liveConfig(repo, key);
    await s.liveRow(repo, key, rowId);
    return toRowVersion(await s.rowVersionOrFail(repo, key, rowId, version), true);
  });
}

export function rollbackRow(
  s: ProjectSession,
  componentId: string,
  configId: string,
  rowId: string,
  version: number,
  changeDescription?: string,
): Promise<Row> {
  return s.write(async (repo, now) => {
    const key = s.key(componentId, configId);
    const record = await s.lockLiveConfig(repo, key);
    const row = await s.liveRow(repo, key, rowId);
    const target = await s.rowVersionOrFail(repo, key, rowId, version);
    Object.assign(row, {
      name: target.name,
      description: target.description,
      configuration: target.configuration,
      isDisabled: target.isDisabled,
    });
    s.nextRowVersion(row, now, changeDescription ?? `Rollback to version ${version}`);
    await s.commitVersion(repo, record, now, changeDescription ?? `Row ${rowId} version ${version} rollback`, {
      entered: [row],
    });
    return toRow(row);
  });
}

/** A new row (new id, empty state) with a version's content, in the same or another configuration. */
export function copyRow(
  s: ProjectSession,
  componentId: string,
  configId: string,
  rowId: string,
  version: number,
  options: { targetConfigId?: string; changeDescription?: string } = {},
): Promise<Row> {
  return s.write(async (repo, now) => {
    const key = s.key(componentId, configId);
    const source = await s.liveConfig(repo, key);
    await s.liveRow(repo, key, rowId);
    const content = await s.rowVersionOrFail(repo, key, rowId, version);
    const targetKey = s.key(componentId, options.targetConfigId || configId);
    const target = await s.lockLiveConfig(repo, targetKey);
    const newRowId = await s.newId(repo, 'row', async (id) => Boolean(await repo.loadRow(targetKey, id)));
    const from = `configuration "${source.name}" (${source.configId}) row ${rowId} version ${version}`;
    const row = s.newRowRecord(targetKey, newRowId, content, now);
    s.nextRowVersion(row, now, options.changeDescription ?? `Copied from ${from}`);
    if (target.rowsSortOrder.length > 0) target.rowsSortOrder = [...target.rowsSortOrder, newRowId];
    await s.commitVersion(repo, target, now, options.changeDescription ?? `Row ${newRowId} copied from ${from}`, {
      entered: [row],
    });
    return toRow(row);
  });
}
