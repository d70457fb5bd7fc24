import type { JsonValue } from '../../json/index.js';
import { displayId } from '../../common/log-text.js';
import type { ConfigStore, StateWrite } from '../config-store.js';
import { cipherScope, type SecretCipher } from '../encryption.js';
import { requireAddressableId } from '../addressable-id.js';
import { newVersionIdentifier, timestamp } from '../identifiers.js';
import { UniqueViolation, type Database } from '../sql/database.js';
import { StoreError } from '../store-error.js';
import type {
  Component,
  ComponentWithConfigurations,
  ConfigVersionDetail,
  ConfigVersionItem,
  Configuration,
  CopyConfigurationInput,
  CreateConfigurationInput,
  CreateRowInput,
  ListInclude,
  MetadataItem,
  Row,
  RowVersion,
  TokenInfo,
  TokenRef,
  UpdateConfigurationInput,
  UpdateRowInput,
  VersionListOptions,
} from '../types.js';
import {
  fromText,
  Repository,
  toText,
  type ConfigKey,
  type ConfigRecord,
  type RowRecord,
  type RowVersionRecord,
  type VersionStamp,
} from './repository.js';

/** Keboola still refuses a read-only token's metadata writes with its older role message. */
export const METADATA_WRITE_DENIED = 'Configuration manipulation is restricted for your user role';

/** Largest `configuration` or `state` body accepted (Keboola's limit). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Effective row order: `rowsSortOrder` when set (unknown ids skipped, missing ones appended), else by id. */
export function orderRows<T extends { rowId: string }>(rows: T[], sortOrder: string[]): T[] {
  const byId = [...rows].sort((a, b) => (a.rowId < b.rowId ? -1 : a.rowId > b.rowId ? 1 : 0));
  if (sortOrder.length === 0) return byId;
  const index = new Map(sortOrder.map((id, i) => [id, i]));
  return byId.sort((a, b) => (index.get(a.rowId) ?? Infinity) - (index.get(b.rowId) ?? Infinity));
}

/**
 * The configurations of one project as one token sees them: every rule of storage-api.md §5–§9
 * (versions, rollback, copy, rows, rowsSortOrder, state, trash) over the Repository. Each
 * operation is one transaction; the configuration's record is locked first, so concurrent
 * writers get consecutive versions and nothing is lost — within one process and, on PostgreSQL
 * (SELECT … FOR UPDATE), across every process sharing the database. Writers of one configuration
 * queue on its row instead of failing and retrying: no 409s for clients to handle.
 */
export class EmbeddedConfigStore implements ConfigStore {
  private readonly token: TokenRef;

  constructor(
    private readonly db: Database,
    private readonly cipher: SecretCipher,
    readonly session: TokenInfo,
  ) {
    this.token = { id: session.id, description: session.description };
  }

  // ---- plumbing ---------------------------------------------------------------------------

  /** A read in one consistent snapshot (a configuration and its rows from the same moment). */
  private read<T>(work: (repo: Repository) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => work(new Repository(tx, this.db.dialect)), { readOnly: true });
  }

  /**
   * A change: one transaction that locks the configuration record first (`lock = true`).
   * `denied` is the 403 message a read-only token gets (Keboola words a few refusals differently).
   */
  private write<T>(work: (repo: Repository, now: string) => Promise<T>, denied?: string): Promise<T> {
    if (this.session.readOnly) return Promise.reject(StoreError.accessDenied(denied));
    const now = timestamp();
    return this.db.transaction((tx) => work(new Repository(tx, this.db.dialect), now));
  }

  private key(componentId: string, configId: string): ConfigKey {
    return { projectId: this.session.projectId, componentId, configId };
  }

  private async requireComponent(repo: Repository, componentId: string): Promise<Component> {
    const component = await repo.loadComponent(componentId);
    if (!component) {
      throw StoreError.notFound(`Component ${componentId} not found. Register it with "gex components import" first.`);
    }
    return component;
  }

  private async requireLive(repo: Repository, key: ConfigKey, lock: boolean): Promise<ConfigRecord> {
    // existence only: decoding the component's definition would be most of a detail request's work
    if (!(await repo.componentExists(key.componentId))) await this.requireComponent(repo, key.componentId);
    const record = await repo.loadConfig(key, lock);
    if (!record || record.isDeleted) throw StoreError.notFound(`Configuration ${key.configId} not found`);
    return record;
  }

  private async requireLiveRow(repo: Repository, key: ConfigKey, rowId: string): Promise<RowRecord> {
    const row = await repo.loadRow(key, rowId);
    if (!row || row.isDeleted) throw StoreError.notFound(`Row ${rowId} not found`);
    return row;
  }

  private stamp(version: number, now: string, changeDescription: string): VersionStamp {
    return { version, created: now, token: this.token, changeDescription, versionIdentifier: newVersionIdentifier() };
  }

  /** Encrypts `#` values and checks the size; returns the exact JSON text to store. */
  private body(componentId: string, value: JsonValue, field: string, previous?: string): string {
    const encrypted = this.cipher.encryptTree(value, cipherScope(this.session.projectId, componentId), previous === undefined ? undefined : fromText(previous));
    const json = toText(encrypted);
    if (Buffer.byteLength(json) > MAX_BODY_BYTES) {
      throw StoreError.validation(`Invalid parameters - ${field}: the value is larger than 4 MB.`);
    }
    return json;
  }

  /** Appends a configuration version for the current record and rows and saves the record. */
  private async commitVersion(repo: Repository, record: ConfigRecord, now: string, changeDescription: string, rows?: RowRecord[]): Promise<void> {
    const live = rows ?? (await repo.loadRows(record));
    record.current = this.stamp(record.current.version + 1, now, changeDescription);
    await repo.insertConfigVersion(record, {
      ...record.current,
      name: record.name,
      description: record.description,
      configuration: record.configuration,
      isDisabled: record.isDisabled,
      isDeleted: record.isDeleted,
      rowsSortOrder: record.rowsSortOrder,
      rows: orderRows(live, record.rowsSortOrder).map((r) => ({ id: r.rowId, version: r.current.version })),
    });
    await repo.saveConfig(record);
  }

  /** Saves a row with a new row version. */
  private async commitRowVersion(repo: Repository, row: RowRecord, now: string, changeDescription: string): Promise<void> {
    row.current = this.stamp(row.current.version + 1, now, changeDescription);
    await repo.insertRowVersion(row, { ...row.current, rowId: row.rowId, name: row.name, description: row.description, configuration: row.configuration, isDisabled: row.isDisabled });
    await repo.saveRow(row);
  }

  /**
   * Runs a write that inserts a configuration under a new id. There is no row to lock before it
   * exists, so two concurrent creates of one id meet at the primary key (PostgreSQL; SQLite runs
   * writers one at a time): the later one gets Keboola's "already exists"; a generated id that a
   * concurrent explicit create took meanwhile is simply drawn again.
   */
  private async insertingNewId<T>(explicitId: string | undefined, write: () => Promise<T>): Promise<T> {
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

  private async newId(repo: Repository, sequence: 'configuration' | 'row', exists: (id: string) => Promise<boolean>): Promise<string> {
    for (;;) {
      const id = String(await repo.nextSequence(sequence));
      if (!(await exists(id))) return id;
    }
  }

  private toRow(r: RowRecord): Row {
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

  private toConfiguration(c: ConfigRecord, rows: RowRecord[]): Configuration {
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
      rows: orderRows(rows, c.rowsSortOrder).map((r) => this.toRow(r)),
      state: fromText(c.state),
      currentVersion: {
        created: c.current.created,
        creatorToken: c.current.token,
        changeDescription: c.current.changeDescription,
        versionIdentifier: c.current.versionIdentifier,
      },
    };
  }

  private async materialize(repo: Repository, record: ConfigRecord): Promise<Configuration> {
    return this.toConfiguration(record, await repo.loadRows(record));
  }

  private async rowVersionOrFail(repo: Repository, key: ConfigKey, rowId: string, version: number): Promise<RowVersionRecord> {
    const v = await repo.loadRowVersion(key, rowId, version);
    if (!v) throw StoreError.notFound(`Version ${version} of row ${rowId} not found`);
    return v;
  }

  // ---- tokens and components ----------------------------------------------------------------

  async verifyToken(): Promise<TokenInfo> {
    return this.session;
  }

  getComponent(componentId: string): Promise<Component> {
    return this.read((repo) => this.requireComponent(repo, componentId));
  }

  async listComponents(options: { componentType?: string; include?: ListInclude[]; isDeleted?: boolean } = {}): Promise<ComponentWithConfigurations[]> {
    const { records, components } = await this.read(async (repo) => ({
      records: await repo.listConfigs(this.session.projectId, null, options.isDeleted ?? false),
      components: new Map((await repo.listComponents()).map((c) => [c.id, c])),
    }));
    const result: ComponentWithConfigurations[] = [];
    for (const componentId of [...new Set(records.map((r) => r.componentId))]) {
      const component = components.get(componentId);
      if (!component || (options.componentType && component.type !== options.componentType)) continue;
      const configurations = await this.listConfigurations(componentId, { isDeleted: options.isDeleted });
      result.push({ component, configurations });
    }
    return result;
  }

  // ---- configurations -----------------------------------------------------------------------

  listConfigurations(componentId: string, options: { isDeleted?: boolean } = {}): Promise<Configuration[]> {
    return this.read(async (repo) => {
      await this.requireComponent(repo, componentId);
      const records = await repo.listConfigs(this.session.projectId, componentId, options.isDeleted ?? false);
      const rows = await repo.loadRowsOfComponent(this.session.projectId, componentId);
      return records.map((c) => this.toConfiguration(c, rows.filter((r) => r.configId === c.configId)));
    });
  }

  async createConfiguration(componentId: string, input: CreateConfigurationInput): Promise<Configuration> {
    if (typeof input.name !== 'string') throw StoreError.validation('Invalid parameters - name: This field is missing.');
    if (input.configurationId) requireAddressableId(input.configurationId, 'configurationId');
    return this.insertingNewId(input.configurationId, () => this.write(async (repo, now) => {
      await this.requireComponent(repo, componentId);
      const configId = input.configurationId || (await this.newId(repo, 'configuration', async (id) => Boolean(await repo.loadConfig(this.key(componentId, id)))));
      const key = this.key(componentId, configId);
      const existing = await repo.loadConfig(key, true);
      if (existing && !existing.isDeleted) {
        throw alreadyExists(configId);
      }
      if (existing) {
        // re-creating a trashed id: its history continues, its rows are gone
        for (const row of await repo.loadRows(key)) await repo.saveRow({ ...row, isDeleted: true, state: '{}' });
      }
      const record: ConfigRecord = {
        ...key,
        created: now,
        creator: this.token,
        isDeleted: false,
        name: input.name,
        description: input.description ?? '',
        configuration: this.body(componentId, input.configuration ?? new Map(), 'configuration'),
        isDisabled: input.isDisabled ?? false,
        rowsSortOrder: [],
        current: existing?.current ?? this.stamp(0, now, ''),
        state: this.body(componentId, input.state ?? new Map(), 'state'),
      };
      await this.commitVersion(repo, record, now, input.changeDescription ?? 'Configuration created', []);
      return this.toConfiguration(record, []);
    }));
  }

  getConfiguration(componentId: string, configId: string): Promise<Configuration> {
    return this.read(async (repo) => this.materialize(repo, await this.requireLive(repo, this.key(componentId, configId), false)));
  }

  updateConfiguration(componentId: string, configId: string, input: UpdateConfigurationInput): Promise<Configuration> {
    return this.write(async (repo, now) => {
      const record = await this.requireLive(repo, this.key(componentId, configId), true);
      const rows = await repo.loadRows(record);
      const next: ConfigRecord = {
        ...record,
        name: input.name ?? record.name,
        description: input.description ?? record.description,
        isDisabled: input.isDisabled ?? record.isDisabled,
        configuration: input.configuration === undefined ? record.configuration : this.body(componentId, input.configuration, 'configuration', record.configuration),
        rowsSortOrder: input.rowsSortOrder === undefined ? record.rowsSortOrder : validateSortOrder(input.rowsSortOrder, rows),
      };
      if (input.state !== undefined) next.state = this.body(componentId, input.state, 'state', record.state);
      const changed =
        next.name !== record.name ||
        next.description !== record.description ||
        next.isDisabled !== record.isDisabled ||
        next.configuration !== record.configuration ||
        JSON.stringify(next.rowsSortOrder) !== JSON.stringify(record.rowsSortOrder);
      if (changed) await this.commitVersion(repo, next, now, input.changeDescription ?? 'Configuration updated', rows);
      else if (next.state !== record.state) await repo.saveConfigState(next, next.state);
      return this.toConfiguration(next, rows);
    });
  }

  updateConfigurationState(componentId: string, configId: string, state: JsonValue): Promise<Configuration> {
    return this.write(async (repo) => {
      const record = await this.requireLive(repo, this.key(componentId, configId), true);
      record.state = this.body(componentId, state, 'state', record.state);
      await repo.saveConfigState(record, record.state);
      return this.materialize(repo, record);
    });
  }

  async deleteConfiguration(componentId: string, configId: string): Promise<void> {
    await this.write(async (repo, now) => {
      await this.requireComponent(repo, componentId);
      const key = this.key(componentId, configId);
      const record = await repo.loadConfig(key, true);
      if (!record) throw StoreError.notFound(`Configuration ${configId} not found`);
      if (record.isDeleted) {
        await repo.purgeConfig(key);
        return;
      }
      record.isDeleted = true;
      await this.commitVersion(repo, record, now, 'Configuration deleted');
    });
  }

  async restoreConfiguration(componentId: string, configId: string): Promise<Configuration> {
    return this.write(async (repo, now) => {
      await this.requireComponent(repo, componentId);
      const record = await repo.loadConfig(this.key(componentId, configId), true);
      if (!record || !record.isDeleted) throw StoreError.notFound(`Configuration ${configId} not found`);
      record.isDeleted = false;
      await this.commitVersion(repo, record, now, 'Configuration restored');
      return this.materialize(repo, record);
    });
  }

  // ---- versions -----------------------------------------------------------------------------

  listConfigurationVersions(componentId: string, configId: string, options: VersionListOptions = {}): Promise<ConfigVersionItem[]> {
    const include = new Set(options.include ?? ['name', 'description']);
    return this.read(async (repo) => {
      const key = this.key(componentId, configId);
      await this.requireLive(repo, key, false);
      const versions = await repo.listConfigVersions(key, options.limit ?? 100, options.offset ?? 0);
      return versions.map((v) => {
        const item: ConfigVersionItem = {
          version: v.version,
          created: v.created,
          versionIdentifier: v.versionIdentifier,
          creatorToken: v.token,
          changeDescription: v.changeDescription,
          isDeleted: v.isDeleted,
        };
        if (include.has('name')) item.name = v.name;
        if (include.has('description')) item.description = v.description;
        if (include.has('configuration')) item.configuration = fromText(v.configuration);
        return item;
      });
    });
  }

  getConfigurationVersion(componentId: string, configId: string, version: number): Promise<ConfigVersionDetail> {
    return this.read(async (repo) => {
      const key = this.key(componentId, configId);
      await this.requireLive(repo, key, false);
      const v = await repo.loadConfigVersion(key, version);
      if (!v) throw StoreError.notFound(`Version ${version} not found`);
      const rows = [];
      for (const ref of v.rows) {
        const rv = await repo.loadRowVersion(key, ref.id, ref.version);
        const row = await repo.loadRow(key, ref.id);
        if (!rv || !row) continue;
        rows.push({
          id: ref.id,
          name: rv.name,
          description: rv.description,
          isDisabled: rv.isDisabled,
          configuration: fromText(rv.configuration),
          version: rv.version,
          created: row.created,
          creatorToken: rv.token,
          changeDescription: rv.changeDescription,
          versionIdentifier: rv.versionIdentifier,
        });
      }
      return {
        version: v.version,
        created: v.created,
        versionIdentifier: v.versionIdentifier,
        creatorToken: v.token,
        changeDescription: v.changeDescription,
        isDeleted: v.isDeleted,
        name: v.name,
        description: v.description,
        configuration: fromText(v.configuration),
        isDisabled: v.isDisabled,
        rowsSortOrder: v.rowsSortOrder,
        rows,
      };
    });
  }

  /**
   * Rollback (§5.12): a new version equal to the target one; rows not in the target are deleted,
   * every row of the target gets a new row version with the target's content; states are kept
   * (a recreated row gets its last known state).
   */
  rollbackConfiguration(componentId: string, configId: string, version: number, changeDescription?: string): Promise<{ version: number }> {
    return this.write(async (repo, now) => {
      const key = this.key(componentId, configId);
      const record = await this.requireLive(repo, key, true);
      const target = await repo.loadConfigVersion(key, version);
      if (!target) throw StoreError.notFound(`Version ${version} not found`);
      const all = new Map((await repo.loadRows(key, true)).map((r) => [r.rowId, r]));
      const wanted = new Set(target.rows.map((r) => r.id));
      for (const row of all.values()) {
        if (!row.isDeleted && !wanted.has(row.rowId)) await repo.saveRow({ ...row, isDeleted: true });
      }
      const live: RowRecord[] = [];
      for (const ref of target.rows) {
        const content = await this.rowVersionOrFail(repo, key, ref.id, ref.version);
        const existing = all.get(ref.id);
        const row: RowRecord = {
          ...key,
          rowId: ref.id,
          created: existing?.created ?? now,
          creator: existing?.creator ?? this.token,
          name: content.name,
          description: content.description,
          configuration: content.configuration,
          isDisabled: content.isDisabled,
          current: existing?.current ?? this.stamp(0, now, ''),
          state: existing?.state ?? '{}',
          isDeleted: false,
        };
        await this.commitRowVersion(repo, row, now, `Rollback to version ${ref.version} (via configuration rollback to version ${version})`);
        live.push(row);
      }
      Object.assign(record, {
        name: target.name,
        description: target.description,
        configuration: target.configuration,
        isDisabled: target.isDisabled,
        rowsSortOrder: target.rowsSortOrder,
      });
      await this.commitVersion(repo, record, now, changeDescription ?? `Rollback to version ${version}`, live);
      return { version: record.current.version };
    });
  }

  /**
   * Copy (§5.13): a new configuration from a version — same row ids at row version 1, the source
   * rows' current states, an empty configuration state.
   */
  copyConfiguration(componentId: string, configId: string, version: number, input: CopyConfigurationInput): Promise<Configuration> {
    if (typeof input.name !== 'string') return Promise.reject(StoreError.validation('Invalid parameters - name: This field is missing.'));
    return this.insertingNewId(undefined, () => this.write(async (repo, now) => {
      const key = this.key(componentId, configId);
      const source = await this.requireLive(repo, key, false);
      const target = await repo.loadConfigVersion(key, version);
      if (!target) throw StoreError.notFound(`Version ${version} not found`);
      const newId = await this.newId(repo, 'configuration', async (id) => Boolean(await repo.loadConfig(this.key(componentId, id))));
      const newKey = this.key(componentId, newId);
      const copyText = `Copied from configuration "${source.name}" (${source.configId}) version ${version}`;
      const sourceRows = new Map((await repo.loadRows(key, true)).map((r) => [r.rowId, r]));
      const rows: RowRecord[] = [];
      for (const ref of target.rows) {
        const content = await this.rowVersionOrFail(repo, key, ref.id, ref.version);
        const row: RowRecord = {
          ...newKey,
          rowId: ref.id,
          created: now,
          creator: this.token,
          name: content.name,
          description: content.description,
          configuration: content.configuration,
          isDisabled: content.isDisabled,
          current: this.stamp(0, now, ''),
          state: sourceRows.get(ref.id)?.state ?? '{}',
          isDeleted: false,
        };
        await this.commitRowVersion(repo, row, now, copyText);
        rows.push(row);
      }
      const record: ConfigRecord = {
        ...newKey,
        created: now,
        creator: this.token,
        isDeleted: false,
        name: input.name,
        description: input.description ?? target.description,
        configuration: target.configuration,
        isDisabled: target.isDisabled,
        rowsSortOrder: target.rowsSortOrder,
        current: this.stamp(0, now, ''),
        state: '{}',
      };
      await this.commitVersion(repo, record, now, input.changeDescription ?? copyText, rows);
      return this.toConfiguration(record, rows);
    }));
  }

  // ---- rows ---------------------------------------------------------------------------------

  listRows(componentId: string, configId: string): Promise<Row[]> {
    return this.read(async (repo) => {
      const record = await this.requireLive(repo, this.key(componentId, configId), false);
      return orderRows(await repo.loadRows(record), record.rowsSortOrder).map((r) => this.toRow(r));
    });
  }

  createRow(componentId: string, configId: string, input: CreateRowInput): Promise<Row> {
    if (input.rowId) requireAddressableId(input.rowId, 'rowId', 'storage.componentsRows.validation');
    return this.write(async (repo, now) => {
      const key = this.key(componentId, configId);
      const record = await this.requireLive(repo, key, true);
      const rowId = input.rowId || (await this.newId(repo, 'row', async (id) => Boolean(await repo.loadRow(key, id))));
      const existing = await repo.loadRow(key, rowId);
      if (existing && !existing.isDeleted) {
        throw new StoreError(400, 'configurationRowAlreadyExists', `Row ${rowId} already exists in configuration ${configId}.`);
      }
      const changeDescription = input.changeDescription ?? `Row ${rowId} added`;
      const row: RowRecord = {
        ...key,
        rowId,
        created: now,
        creator: this.token,
        name: input.name ?? '',
        description: input.description ?? '',
        configuration: this.body(componentId, input.configuration ?? new Map(), 'configuration'),
        isDisabled: input.isDisabled ?? false,
        // a deleted row's id may be reused: its version counter continues
        current: existing?.current ?? this.stamp(0, now, ''),
        state: this.body(componentId, input.state ?? new Map(), 'state'),
        isDeleted: false,
      };
      await this.commitRowVersion(repo, row, now, changeDescription);
      if (record.rowsSortOrder.length > 0) record.rowsSortOrder = [...record.rowsSortOrder, rowId];
      await this.commitVersion(repo, record, now, changeDescription);
      return this.toRow(row);
    });
  }

  getRow(componentId: string, configId: string, rowId: string): Promise<Row> {
    return this.read(async (repo) => {
      const key = this.key(componentId, configId);
      await this.requireLive(repo, key, false);
      return this.toRow(await this.requireLiveRow(repo, key, rowId));
    });
  }

  /**
   * Sending name, description or isDisabled makes a new version (Keboola's newest behaviour);
   * a configuration is compared with the stored one; state never makes a version.
   */
  updateRow(componentId: string, configId: string, rowId: string, input: UpdateRowInput): Promise<Row> {
    return this.write(async (repo, now) => {
      const key = this.key(componentId, configId);
      const record = await this.requireLive(repo, key, true);
      const row = await this.requireLiveRow(repo, key, rowId);
      const configuration = input.configuration === undefined ? row.configuration : this.body(componentId, input.configuration, 'configuration', row.configuration);
      const changed = input.name !== undefined || input.description !== undefined || input.isDisabled !== undefined || configuration !== row.configuration;
      const next: RowRecord = {
        ...row,
        name: input.name ?? row.name,
        description: input.description ?? row.description,
        isDisabled: input.isDisabled ?? row.isDisabled,
        configuration,
        state: input.state === undefined ? row.state : this.body(componentId, input.state, 'state', row.state),
      };
      if (changed) {
        const changeDescription = input.changeDescription ?? `Row ${rowId} changed`;
        await this.commitRowVersion(repo, next, now, changeDescription);
        await this.commitVersion(repo, record, now, changeDescription);
      } else if (next.state !== row.state) await repo.saveRowState(key, rowId, next.state);
      return this.toRow(next);
    });
  }

  updateRowState(componentId: string, configId: string, rowId: string, state: JsonValue): Promise<Row> {
    return this.write(async (repo) => {
      const key = this.key(componentId, configId);
      await this.requireLive(repo, key, true);
      const row = await this.requireLiveRow(repo, key, rowId);
      row.state = this.body(componentId, state, 'state', row.state);
      await repo.saveRowState(key, rowId, row.state);
      return this.toRow(row);
    });
  }

  /**
   * All or nothing: one transaction that locks the configuration (as every write does), checks
   * every state — the row is live, the encrypted body is within 4 MB — and only then writes them.
   * Any failure, a check's or the database's mid-way, rolls every write back.
   */
  saveStates(componentId: string, configId: string, writes: StateWrite[]): Promise<void> {
    const owners = writes.map((w) => w.rowId);
    if (new Set(owners).size !== owners.length) {
      return Promise.reject(StoreError.validation('Invalid parameters - states: each row (and the configuration) may be given once.'));
    }
    return this.write(async (repo) => {
      const key = this.key(componentId, configId);
      const record = await this.requireLive(repo, key, true);
      const checked: Array<{ rowId: string | null; text: string }> = [];
      for (const { rowId, state } of writes) {
        if (rowId === null) {
          checked.push({ rowId, text: this.body(componentId, state, 'state', record.state) });
        } else {
          const row = await this.requireLiveRow(repo, key, rowId);
          checked.push({ rowId, text: this.body(componentId, state, `state of row ${displayId(rowId)}`, row.state) });
        }
      }
      for (const { rowId, text } of checked) {
        if (rowId === null) await repo.saveConfigState(key, text);
        else await repo.saveRowState(key, rowId, text);
      }
    });
  }

  async deleteRow(componentId: string, configId: string, rowId: string, changeDescription?: string): Promise<void> {
    await this.write(async (repo, now) => {
      const key = this.key(componentId, configId);
      const record = await this.requireLive(repo, key, true);
      const row = await this.requireLiveRow(repo, key, rowId);
      // the row keeps its state and version counter for a later rollback or re-creation
      await repo.saveRow({ ...row, isDeleted: true });
      record.rowsSortOrder = record.rowsSortOrder.filter((id) => id !== rowId);
      await this.commitVersion(repo, record, now, changeDescription ?? `Row ${rowId} deleted`);
    });
  }

  listRowVersions(componentId: string, configId: string, rowId: string, options: VersionListOptions = {}): Promise<RowVersion[]> {
    const withConfiguration = (options.include ?? ['configuration']).includes('configuration');
    return this.read(async (repo) => {
      const key = this.key(componentId, configId);
      await this.requireLive(repo, key, false);
      await this.requireLiveRow(repo, key, rowId);
      const versions = await repo.listRowVersions(key, rowId, options.limit ?? 100, options.offset ?? 0);
      return versions.map((v) => toRowVersion(v, withConfiguration));
    });
  }

  getRowVersion(componentId: string, configId: string, rowId: string, version: number): Promise<RowVersion> {
    return this.read(async (repo) => {
      const key = this.key(componentId, configId);
      await this.requireLive(repo, key, false);
      await this.requireLiveRow(repo, key, rowId);
      return toRowVersion(await this.rowVersionOrFail(repo, key, rowId, version), true);
    });
  }

  rollbackRow(componentId: string, configId: string, rowId: string, version: number, changeDescription?: string): Promise<Row> {
    return this.write(async (repo, now) => {
      const key = this.key(componentId, configId);
      const record = await this.requireLive(repo, key, true);
      const row = await this.requireLiveRow(repo, key, rowId);
      const target = await this.rowVersionOrFail(repo, key, rowId, version);
      Object.assign(row, { name: target.name, description: target.description, configuration: target.configuration, isDisabled: target.isDisabled });
      await this.commitRowVersion(repo, row, now, changeDescription ?? `Rollback to version ${version}`);
      await this.commitVersion(repo, record, now, changeDescription ?? `Row ${rowId} version ${version} rollback`);
      return this.toRow(row);
    });
  }

  copyRow(componentId: string, configId: string, rowId: string, version: number, options: { targetConfigId?: string; changeDescription?: string } = {}): Promise<Row> {
    return this.write(async (repo, now) => {
      const key = this.key(componentId, configId);
      const source = await this.requireLive(repo, key, false);
      await this.requireLiveRow(repo, key, rowId);
      const content = await this.rowVersionOrFail(repo, key, rowId, version);
      const targetKey = this.key(componentId, options.targetConfigId || configId);
      const target = await this.requireLive(repo, targetKey, true);
      const newRowId = await this.newId(repo, 'row', async (id) => Boolean(await repo.loadRow(targetKey, id)));
      const from = `configuration "${source.name}" (${source.configId}) row ${rowId} version ${version}`;
      const row: RowRecord = {
        ...targetKey,
        rowId: newRowId,
        created: now,
        creator: this.token,
        name: content.name,
        description: content.description,
        configuration: content.configuration,
        isDisabled: content.isDisabled,
        current: this.stamp(0, now, ''),
        state: '{}',
        isDeleted: false,
      };
      await this.commitRowVersion(repo, row, now, options.changeDescription ?? `Copied from ${from}`);
      if (target.rowsSortOrder.length > 0) target.rowsSortOrder = [...target.rowsSortOrder, newRowId];
      await this.commitVersion(repo, target, now, options.changeDescription ?? `Row ${newRowId} copied from ${from}`);
      return this.toRow(row);
    });
  }

  // ---- metadata -----------------------------------------------------------------------------

  addMetadata(componentId: string, configId: string, metadata: Array<{ key: string; value: string }>): Promise<MetadataItem[]> {
    if (metadata.length === 0) return Promise.reject(StoreError.validation('Invalid parameters - metadata: This value should not be blank.'));
    return this.write(async (repo, now) => {
      const key = this.key(componentId, configId);
      await this.requireLive(repo, key, true);
      for (const item of metadata) {
        if (!item.key) throw StoreError.validation('Invalid parameters - metadata key: This value should not be blank.');
        await repo.upsertMetadata(key, await repo.nextSequence('metadata'), item.key, item.value, now);
      }
      return (await repo.listMetadata(key)).map(toMetadata);
    }, METADATA_WRITE_DENIED);
  }

  listMetadata(componentId: string, configId: string): Promise<MetadataItem[]> {
    return this.read(async (repo) => {
      const key = this.key(componentId, configId);
      await this.requireLive(repo, key, false);
      return (await repo.listMetadata(key)).map(toMetadata);
    });
  }

  async deleteMetadata(componentId: string, configId: string, metadataId: string): Promise<void> {
    await this.write(async (repo) => {
      const key = this.key(componentId, configId);
      await this.requireLive(repo, key, true);
      // an id beyond 2^53 cannot exist (and would overflow PostgreSQL's bigint): not found
      if (!/^\d+$/.test(metadataId) || !Number.isSafeInteger(Number(metadataId)) || (await repo.deleteMetadata(key, metadataId)) === 0) {
        throw StoreError.notFound(`Metadata with id "${metadataId}" not found for "${componentId}" configuration "${configId}"`);
      }
    });
  }
}

function alreadyExists(configId: string): StoreError {
  return new StoreError(400, 'configurationAlreadyExists', `Configuration ${configId} already exists.`);
}

/** A full permutation of the row ids, or `[]` for the natural order (by id). */
function validateSortOrder(order: string[], rows: RowRecord[]): string[] {
  if (order.length === 0) return order;
  const ids = new Set(rows.map((r) => r.rowId));
  const unknown = order.filter((id) => !ids.has(id));
  if (unknown.length > 0) {
    throw StoreError.validation(`Invalid parameters - rowsSortOrder: rows ${unknown.map((id) => `"${id}"`).join(', ')} do not exist in the configuration.`);
  }
  const listed = new Set(order);
  const missing = [...ids].filter((id) => !listed.has(id));
  if (missing.length > 0 || listed.size !== order.length) {
    throw StoreError.validation(
      `Invalid rowsSortOrder: it must list every row of the configuration exactly once${missing.length ? ` (missing ${missing.map((id) => `"${id}"`).join(', ')})` : ' (an id is repeated)'}.`,
      'validation.invalidRowSortOrder',
    );
  }
  return order;
}

function toRowVersion(v: RowVersionRecord, withConfiguration: boolean): RowVersion {
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

function toMetadata(r: Record<string, unknown>): MetadataItem {
  return { id: String(r.id), key: String(r.meta_key), value: String(r.meta_value), provider: String(r.provider ?? 'user'), timestamp: String(r.timestamp) };
}
