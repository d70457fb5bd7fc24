import { StoreError } from '../store-error.js';
import type {
  ConfigVersionDetail,
  ConfigVersionItem,
  Configuration,
  CopyConfigurationInput,
  VersionListOptions,
} from '../types.js';
import { insertingNewId } from './configurations.js';
import {
  fromText,
  type ConfigKey,
  type ConfigVersionContent,
  type ConfigVersionRecord,
  type RowRecord,
} from './records.js';
import type { Repository } from './repository.js';
import { orderRows, toConfiguration } from './resources.js';
import type { ProjectSession } from './session.js';

/** A configuration's history: its versions, rollback to one, and a new configuration copied from one. */

/** What every view of a configuration version shows of it, list item and detail alike. */
function versionFields(v: ConfigVersionRecord): ConfigVersionItem {
  return {
    version: v.version,
    created: v.created,
    versionIdentifier: v.versionIdentifier,
    creatorToken: v.token,
    changeDescription: v.changeDescription,
    isDeleted: v.isDeleted,
  };
}

export function listConfigurationVersions(
  s: ProjectSession,
  componentId: string,
  configId: string,
  options: VersionListOptions = {},
): Promise<ConfigVersionItem[]> {
  const include = new Set(options.include ?? ['name', 'description']);
  return s.read(async (repo) => {
    const key = s.key(componentId, configId);
    await s.liveConfig(repo, key);
    const versions = await repo.listConfigVersions(key, options.limit ?? 100, options.offset ?? 0);
    return versions.map((v) => {
      const item: ConfigVersionItem = versionFields(v);
      if (include.has('name')) item.name = v.name;
      if (include.has('description')) item.description = v.description;
      if (include.has('configuration')) item.configuration = fromText(v.configuration);
      return item;
    });
  });
}

export function getConfigurationVersion(
  s: ProjectSession,
  componentId: string,
  configId: string,
  version: number,
): Promise<ConfigVersionDetail> {
  return s.read(async (repo) => {
    const key = s.key(componentId, configId);
    await s.liveConfig(repo, key);
    const v = await versionOrFail(repo, key, version);
    const rows = [];
    for (const rv of v.rows) {
      if (rv.rowCreated === undefined) continue;
      rows.push({
        id: rv.rowId,
        name: rv.name,
        description: rv.description,
        isDisabled: rv.isDisabled,
        configuration: fromText(rv.configuration),
        version: rv.version,
        created: rv.rowCreated,
        creatorToken: rv.token,
        changeDescription: rv.changeDescription,
        versionIdentifier: rv.versionIdentifier,
      });
    }
    return {
      ...versionFields(v),
      name: v.name,
      description: v.description,
      configuration: fromText(v.configuration),
      isDisabled: v.isDisabled,
      rowsSortOrder: v.rowsSortOrder,
      rows,
    };
  });
}

/** A configuration version with its rows (in its order) and its custom order. */
async function versionOrFail(repo: Repository, key: ConfigKey, version: number): Promise<ConfigVersionContent> {
  const v = await repo.loadConfigVersion(key, version);
  if (!v) throw StoreError.notFound(`Version ${version} not found`);
  const rowsSortOrder = await repo.holdings.loadVersionOrder(key, version);
  return { ...v, rowsSortOrder, rows: orderRows(await repo.holdings.loadVersionRows(key, version), rowsSortOrder) };
}

/**
 * Rollback: a new version equal to the target one; rows not in the target are deleted, every row
 * of the target gets a new row version with the target's content; states are kept (a recreated
 * row gets its last known state).
 */
export function rollbackConfiguration(
  s: ProjectSession,
  componentId: string,
  configId: string,
  version: number,
  changeDescription?: string,
): Promise<{ version: number }> {
  return s.write(async (repo, now) => {
    const key = s.key(componentId, configId);
    const record = await s.lockLiveConfig(repo, key);
    const target = await versionOrFail(repo, key, version);
    const all = new Map((await repo.loadRowsIncludingDeleted(key)).map((r) => [r.rowId, r]));
    const wanted = new Set(target.rows.map((r) => r.rowId));
    for (const row of all.values()) {
      if (!row.isDeleted && !wanted.has(row.rowId)) await repo.saveRow({ ...row, isDeleted: true });
    }
    const live: RowRecord[] = [];
    for (const ref of target.rows) {
      const row = s.newRowRecord(key, ref.rowId, ref, now, all.get(ref.rowId));
      s.nextRowVersion(
        row,
        now,
        `Rollback to version ${ref.version} (via configuration rollback to version ${version})`,
      );
      live.push(row);
    }
    Object.assign(record, {
      name: target.name,
      description: target.description,
      configuration: target.configuration,
      isDisabled: target.isDisabled,
      rowsSortOrder: target.rowsSortOrder,
    });
    await s.commitVersion(repo, record, now, changeDescription ?? `Rollback to version ${version}`, {
      replaceAll: true,
      entered: live,
    });
    return { version: record.current.version };
  });
}

/**
 * Copy: a new configuration from a version — same row ids at row version 1, the source rows'
 * current states, an empty configuration state.
 */
export function copyConfiguration(
  s: ProjectSession,
  componentId: string,
  configId: string,
  version: number,
  input: CopyConfigurationInput,
): Promise<Configuration> {
  if (typeof input.name !== 'string')
    return Promise.reject(StoreError.validation('Invalid parameters - name: This field is missing.'));
  const name = input.name;
  return insertingNewId(undefined, () =>
    s.write(async (repo, now) => {
      const key = s.key(componentId, configId);
      const source = await s.liveConfig(repo, key);
      const target = await versionOrFail(repo, key, version);
      const newId = await s.newId(repo, 'configuration', async (id) =>
        Boolean(await repo.loadConfig(s.key(componentId, id))),
      );
      const newKey = s.key(componentId, newId);
      const copyText = `Copied from configuration "${source.name}" (${source.configId}) version ${version}`;
      const sourceRows = new Map((await repo.loadRowsIncludingDeleted(key)).map((r) => [r.rowId, r]));
      const rows: RowRecord[] = [];
      for (const ref of target.rows) {
        const row = s.newRowRecord(newKey, ref.rowId, ref, now, { state: sourceRows.get(ref.rowId)?.state });
        s.nextRowVersion(row, now, copyText);
        rows.push(row);
      }
      const content = {
        name,
        description: input.description ?? target.description,
        configuration: target.configuration,
        isDisabled: target.isDisabled,
        rowsSortOrder: target.rowsSortOrder,
      };
      const record = s.newConfigRecord(newKey, content, now);
      await s.commitVersion(repo, record, now, input.changeDescription ?? copyText, { entered: rows });
      return toConfiguration(record, rows);
    }),
  );
}
