import { requireAddressableId } from '../addressable-id.js';
import { excerptId, excerptList, excerptQuoted } from '../../common/log-text.js';
import { UniqueViolation } from '../sql/database.js';
import { StoreError } from '../store-error.js';
import type {
  Component,
  ComponentWithConfigurations,
  Configuration,
  CreateConfigurationInput,
  ListInclude,
  UpdateConfigurationInput,
} from '../types.js';
import type { ConfigRecord, RowRecord } from './records.js';
import type { Repository } from './repository.js';
import { toConfiguration } from './resources.js';
import type { ProjectSession } from './session.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/** Components and the configurations' own lifecycle: list, create, read, update, trash, restore. */

export function getComponent(s: ProjectSession, componentId: string): Promise<Component> {
  return s.read((repo) => s.requireComponent(repo, componentId));
}

export async function listComponents(
  s: ProjectSession,
  options: { componentType?: string; include?: ListInclude[]; isDeleted?: boolean } = {},
): Promise<ComponentWithConfigurations[]> {
  const { records, components } = await s.read(async (repo) => ({
    records: await repo.listConfigs(s.info.projectId, null, options.isDeleted ?? false),
    components: new Map((await repo.listComponents()).map((c) => [c.id, c])),
  }));
  const result: ComponentWithConfigurations[] = [];
  for (const componentId of [...new Set(records.map((r) => r.componentId))]) {
    const component = components.get(componentId);
    if (!component || (options.componentType && component.type !== options.componentType)) continue;
    const configurations = await listConfigurations(s, componentId, { isDeleted: options.isDeleted });
    result.push({ component, configurations });
  }
  return result;
}

export function listConfigurations(
  s: ProjectSession,
  componentId: string,
  options: { isDeleted?: boolean } = {},
): Promise<Configuration[]> {
  return s.read(async (repo) => {
    await s.requireComponent(repo, componentId);
    const records = await repo.listConfigs(s.info.projectId, componentId, options.isDeleted ?? false);
    const rows = new Map<string, RowRecord[]>();
    for (const row of await repo.loadRowsOfComponent(s.info.projectId, componentId)) {
      const own = rows.get(row.configId);
      if (own) own.push(row);
      else rows.set(row.configId, [row]);
    }
    return records.map((c) => toConfiguration(c, rows.get(c.configId) ?? []));
  });
}

export async function createConfiguration(
  s: ProjectSession,
  componentId: string,
  input: CreateConfigurationInput,
): Promise<Configuration> {
  checkCreateInput(input);
  return insertingNewId(input.configurationId, () =>
    s.write(async (repo, now) => {
      const record = await newConfiguration(s, repo, componentId, input, now);
      // a re-created id's history goes on without the old rows
      await s.commitVersion(repo, record, now, input.changeDescription ?? 'Configuration created', {
        replaceAll: true,
      });
      return toConfiguration(record, []);
    }),
  );
}

/** What a create checks of its input before it touches the database. */
export function checkCreateInput(input: CreateConfigurationInput): void {
  if (typeof input.name !== 'string') throw StoreError.validation('Invalid parameters - name: This field is missing.');
  if (input.configurationId) requireAddressableId(input.configurationId, 'configurationId');
}

/**
 * The record of a configuration created now (not yet saved, at the version before its first): a
 * new id, or the given one unless it is live. The id of a trashed configuration is reused: its
 * history continues, its rows are gone.
 */
export async function newConfiguration(
  s: ProjectSession,
  repo: Repository,
  componentId: string,
  input: CreateConfigurationInput,
  now: string,
): Promise<ConfigRecord> {
  await s.requireComponent(repo, componentId);
  const configId =
    input.configurationId ||
    (await s.newId(repo, 'configuration', async (id) => Boolean(await repo.loadConfig(s.key(componentId, id)))));
  const key = s.key(componentId, configId);
  const existing = await repo.loadConfigForUpdate(key);
  if (existing && !existing.isDeleted) {
    throw alreadyExists(configId);
  }
  if (existing) {
    for (const row of await repo.loadRows(key)) await repo.saveRow({ ...row, isDeleted: true, state: '{}' });
  }
  const configuration = s.configurationBody(key, input.configuration ?? new Map());
  const state = s.body(componentId, input.state ?? new Map(), 'state');
  const content = {
    name: input.name,
    description: input.description ?? '',
    configuration,
    isDisabled: input.isDisabled ?? false,
    rowsSortOrder: [],
  };
  return s.newConfigRecord(key, content, now, { current: existing?.current, state });
}

export function getConfiguration(s: ProjectSession, componentId: string, configId: string): Promise<Configuration> {
  return s.read(async (repo) => {
    const record = await s.liveConfig(repo, s.key(componentId, configId));
    return toConfiguration(record, await repo.loadRows(record));
  });
}

export function updateConfiguration(
  s: ProjectSession,
  componentId: string,
  configId: string,
  input: UpdateConfigurationInput,
): Promise<Configuration> {
  return s.write(async (repo, now) => {
    const record = await s.lockLiveConfig(repo, s.key(componentId, configId));
    const rows = await repo.loadRows(record);
    const next: ConfigRecord = {
      ...record,
      name: input.name ?? record.name,
      description: input.description ?? record.description,
      isDisabled: input.isDisabled ?? record.isDisabled,
      configuration:
        input.configuration === undefined
          ? record.configuration
          : s.configurationBody(record, input.configuration, record.configuration),
      rowsSortOrder:
        input.rowsSortOrder === undefined ? record.rowsSortOrder : validateSortOrder(input.rowsSortOrder, rows),
    };
    if (input.state !== undefined) next.state = s.body(componentId, input.state, 'state', record.state);
    const changed =
      next.name !== record.name ||
      next.description !== record.description ||
      next.isDisabled !== record.isDisabled ||
      next.configuration !== record.configuration ||
      JSON.stringify(next.rowsSortOrder) !== JSON.stringify(record.rowsSortOrder);
    if (changed) await s.commitVersion(repo, next, now, input.changeDescription ?? 'Configuration updated');
    else if (next.state !== record.state) await repo.saveConfigState(next, next.state);
    return toConfiguration(next, rows);
  });
}

/** Moves a live configuration to the trash; a trashed one is purged with its history. */
export async function deleteConfiguration(s: ProjectSession, componentId: string, configId: string): Promise<void> {
  await s.write(async (repo, now) => {
    await s.requireComponent(repo, componentId);
    const key = s.key(componentId, configId);
    const record = await repo.loadConfigForUpdate(key);
    if (!record) throw StoreError.notFound(`Configuration ${configId} not found`);
    if (record.isDeleted) {
      await repo.purgeConfig(key);
      return;
    }
    record.isDeleted = true;
    await s.commitVersion(repo, record, now, 'Configuration deleted');
  });
}

export function restoreConfiguration(s: ProjectSession, componentId: string, configId: string): Promise<Configuration> {
  return s.write(async (repo, now) => {
    await s.requireComponent(repo, componentId);
    const record = await repo.loadConfigForUpdate(s.key(componentId, configId));
    if (!record || !record.isDeleted) throw StoreError.notFound(`Configuration ${configId} not found`);
    record.isDeleted = false;
    await s.commitVersion(repo, record, now, 'Configuration restored');
    return toConfiguration(record, await repo.loadRows(record));
  });
}

/**
 * Runs a write that inserts a configuration under a new id. There is no record to lock before it
 * exists, so two concurrent creates of one id meet at the primary key (PostgreSQL; SQLite runs
 * writers one at a time): the later one gets Keboola's "already exists"; a generated id that a
 * concurrent explicit create took meanwhile is simply drawn again.
 */
export async function insertingNewId<T>(explicitId: string | undefined, write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof UniqueViolation)) throw error;
      if (explicitId) throw alreadyExists(explicitId);
      if (attempt >= 3) throw error;
    }
  }
}

function alreadyExists(configId: string): StoreError {
  return StoreError.keboola(
    KEBOOLA_ERRORS.configurationAlreadyExists,
    `Configuration ${excerptId(configId)} already exists.`,
  );
}

/** A full permutation of the row ids, or `[]` for the natural order (by id). */
export function validateSortOrder(order: string[], rows: RowRecord[]): string[] {
  if (order.length === 0) return order;
  const ids = new Set(rows.map((r) => r.rowId));
  const unknown = order.filter((id) => !ids.has(id));
  if (unknown.length > 0) {
    throw StoreError.validation(
      `Invalid parameters - rowsSortOrder: rows ${excerptList(unknown, (id) => excerptQuoted(id))} do not exist in the configuration.`,
    );
  }
  const listed = new Set(order);
  const missing = [...ids].filter((id) => !listed.has(id));
  if (missing.length > 0 || listed.size !== order.length) {
    throw StoreError.validation(
      `Invalid rowsSortOrder: it must list every row of the configuration exactly once${missing.length ? ` (missing ${excerptList(missing, (id) => excerptQuoted(id))})` : ' (an id is repeated)'}.`,
      KEBOOLA_ERRORS.invalidRowSortOrder.code,
    );
  }
  return order;
}
