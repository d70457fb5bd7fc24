import { decodeJson, stringifyExact, type JsonValue } from '../../json/index.js';
import type { Dialect, SqlExecutor, SqlParam } from '../sql/database.js';
import type { Component, TokenRef } from '../types.js';

/**
 * Records of the store's tables and the SQL that reads and writes them — the only place that
 * knows table and column names. Bodies (`configuration`, `state`) are stored as exact JSON text.
 */

export interface ConfigKey {
  projectId: number;
  componentId: string;
  configId: string;
}

export interface VersionStamp {
  version: number;
  created: string;
  token: TokenRef;
  changeDescription: string;
  versionIdentifier: string;
}

export interface ConfigRecord extends ConfigKey {
  created: string;
  creator: TokenRef;
  isDeleted: boolean;
  name: string;
  description: string;
  /** exact JSON text of the configuration body */
  configuration: string;
  isDisabled: boolean;
  rowsSortOrder: string[];
  current: VersionStamp;
  state: string;
}

export interface RowRecord extends ConfigKey {
  rowId: string;
  created: string;
  creator: TokenRef;
  name: string;
  description: string;
  configuration: string;
  isDisabled: boolean;
  current: VersionStamp;
  state: string;
  isDeleted: boolean;
}

export interface RowRef {
  id: string;
  version: number;
}

export interface ConfigVersionRecord extends VersionStamp {
  name: string;
  description: string;
  configuration: string;
  isDisabled: boolean;
  isDeleted: boolean;
  rowsSortOrder: string[];
  rows: RowRef[];
}

export interface RowVersionRecord extends VersionStamp {
  rowId: string;
  name: string;
  description: string;
  configuration: string;
  isDisabled: boolean;
}

export const toText = (v: JsonValue): string => stringifyExact(v);
export const fromText = (s: string): JsonValue => decodeJson(s);

type DbRow = Record<string, unknown>;
const bool = (v: unknown): boolean => Number(v) === 1;
const num = (v: unknown): number => Number(v);
const text = (v: unknown): string => String(v ?? '');
const flag = (b: boolean): number => (b ? 1 : 0);
const keyParams = (k: ConfigKey): SqlParam[] => [k.projectId, k.componentId, k.configId];

function stamp(r: DbRow, prefix: '' | 'version_'): VersionStamp {
  return {
    version: num(r.version),
    created: text(r[`${prefix}created`]),
    token: { id: num(r[`${prefix}token_id`]), description: text(r[`${prefix}token_description`]) },
    changeDescription: text(r.change_description),
    versionIdentifier: text(r.version_identifier),
  };
}

function configFromDb(r: DbRow): ConfigRecord {
  return {
    projectId: num(r.project_id),
    componentId: text(r.component_id),
    configId: text(r.id),
    created: text(r.created),
    creator: { id: num(r.creator_token_id), description: text(r.creator_token_description) },
    isDeleted: bool(r.is_deleted),
    name: text(r.name),
    description: text(r.description),
    configuration: text(r.configuration),
    isDisabled: bool(r.is_disabled),
    rowsSortOrder: JSON.parse(text(r.rows_sort_order)) as string[],
    current: stamp(r, 'version_'),
    state: text(r.state),
  };
}

function rowFromDb(r: DbRow): RowRecord {
  return {
    projectId: num(r.project_id),
    componentId: text(r.component_id),
    configId: text(r.configuration_id),
    rowId: text(r.id),
    created: text(r.created),
    creator: { id: num(r.creator_token_id), description: text(r.creator_token_description) },
    name: text(r.name),
    description: text(r.description),
    configuration: text(r.configuration),
    isDisabled: bool(r.is_disabled),
    current: stamp(r, 'version_'),
    state: text(r.state),
    isDeleted: bool(r.is_deleted),
  };
}

function componentFromDb(r: DbRow): Component {
  return { id: text(r.id), type: text(r.type), name: text(r.name), definition: fromText(text(r.definition)) };
}

function configVersionFromDb(r: DbRow): ConfigVersionRecord {
  return {
    ...stamp(r, ''),
    name: text(r.name),
    description: text(r.description),
    configuration: text(r.configuration),
    isDisabled: bool(r.is_disabled),
    isDeleted: bool(r.is_deleted),
    rowsSortOrder: JSON.parse(text(r.rows_sort_order)) as string[],
    rows: JSON.parse(text(r.rows)) as RowRef[],
  };
}

function rowVersionFromDb(r: DbRow): RowVersionRecord {
  return {
    ...stamp(r, ''),
    rowId: text(r.row_id),
    name: text(r.name),
    description: text(r.description),
    configuration: text(r.configuration),
    isDisabled: bool(r.is_disabled),
  };
}

export class Repository {
  private readonly forUpdate: string;
  /** appended to text columns in ORDER BY: ids sort by bytes on both databases */
  private readonly byteOrder: string;

  constructor(
    private readonly tx: SqlExecutor,
    dialect: Dialect,
  ) {
    this.forUpdate = dialect.forUpdate;
    this.byteOrder = dialect.byteOrder;
  }

  async loadComponent(id: string): Promise<Component | undefined> {
    const r = await this.tx.get<DbRow>('SELECT * FROM components WHERE id = ?', [id]);
    return r ? componentFromDb(r) : undefined;
  }

  async componentExists(id: string): Promise<boolean> {
    return (await this.tx.get<DbRow>('SELECT 1 AS found FROM components WHERE id = ?', [id])) !== undefined;
  }

  async listComponents(): Promise<Component[]> {
    return (await this.tx.all<DbRow>(`SELECT * FROM components ORDER BY id${this.byteOrder}`)).map(componentFromDb);
  }

  async saveComponent(c: Component, builtin: boolean): Promise<void> {
    await this.tx.run(
      `INSERT INTO components (id, type, name, definition, builtin) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET type = excluded.type, name = excluded.name, definition = excluded.definition, builtin = excluded.builtin`,
      [c.id, c.type, c.name, toText(c.definition), flag(builtin)],
    );
  }

  /** A store-wide setting, or undefined. */
  async loadSetting(name: string): Promise<string | undefined> {
    const row = await this.tx.get<DbRow>('SELECT value FROM store_settings WHERE name = ?', [name]);
    return row ? text(row.value) : undefined;
  }

  /** Sets a setting unless it is set already (the first of concurrent writers wins). */
  async initSetting(name: string, value: string): Promise<void> {
    await this.tx.run('INSERT INTO store_settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', [name, value]);
  }

  /**
   * Next value of a named counter (ids are generated from it). The upsert is atomic on both
   * databases and its row stays locked until commit, so concurrent transactions get distinct values.
   */
  async nextSequence(name: string): Promise<number> {
    const row = await this.tx.get<DbRow>(
      'INSERT INTO sequences (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = sequences.value + 1 RETURNING value',
      [name],
    );
    return num(row!.value);
  }

  async loadConfig(key: ConfigKey, lock = false): Promise<ConfigRecord | undefined> {
    const r = await this.tx.get<DbRow>(
      `SELECT * FROM configurations WHERE project_id = ? AND component_id = ? AND id = ?${lock ? this.forUpdate : ''}`,
      keyParams(key),
    );
    return r ? configFromDb(r) : undefined;
  }

  async listConfigs(projectId: number, componentId: string | null, deleted: boolean): Promise<ConfigRecord[]> {
    const rows = componentId === null
      ? await this.tx.all<DbRow>(`SELECT * FROM configurations WHERE project_id = ? AND is_deleted = ? ORDER BY component_id${this.byteOrder}, id${this.byteOrder}`, [
          projectId,
          flag(deleted),
        ])
      : await this.tx.all<DbRow>(`SELECT * FROM configurations WHERE project_id = ? AND component_id = ? AND is_deleted = ? ORDER BY id${this.byteOrder}`, [
          projectId,
          componentId,
          flag(deleted),
        ]);
    return rows.map(configFromDb);
  }

  async saveConfig(c: ConfigRecord): Promise<void> {
    await this.tx.run(
      `INSERT INTO configurations (project_id, component_id, id, created, creator_token_id, creator_token_description, version, is_deleted,
         name, description, configuration, is_disabled, rows_sort_order, change_description, version_created, version_token_id,
         version_token_description, version_identifier, state)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (project_id, component_id, id) DO UPDATE SET
         created = excluded.created, creator_token_id = excluded.creator_token_id, creator_token_description = excluded.creator_token_description,
         version = excluded.version, is_deleted = excluded.is_deleted, name = excluded.name, description = excluded.description,
         configuration = excluded.configuration, is_disabled = excluded.is_disabled, rows_sort_order = excluded.rows_sort_order,
         change_description = excluded.change_description, version_created = excluded.version_created,
         version_token_id = excluded.version_token_id, version_token_description = excluded.version_token_description,
         version_identifier = excluded.version_identifier, state = excluded.state`,
      [
        ...keyParams(c),
        c.created,
        c.creator.id,
        c.creator.description,
        c.current.version,
        flag(c.isDeleted),
        c.name,
        c.description,
        c.configuration,
        flag(c.isDisabled),
        JSON.stringify(c.rowsSortOrder),
        c.current.changeDescription,
        c.current.created,
        c.current.token.id,
        c.current.token.description,
        c.current.versionIdentifier,
        c.state,
      ],
    );
  }

  async saveConfigState(key: ConfigKey, state: string): Promise<void> {
    await this.tx.run('UPDATE configurations SET state = ? WHERE project_id = ? AND component_id = ? AND id = ?', [state, ...keyParams(key)]);
  }

  async insertConfigVersion(key: ConfigKey, v: ConfigVersionRecord): Promise<void> {
    await this.tx.run(
      `INSERT INTO configuration_versions (project_id, component_id, configuration_id, version, created, token_id, token_description,
         change_description, version_identifier, name, description, configuration, is_disabled, is_deleted, rows_sort_order, rows)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        ...keyParams(key),
        v.version,
        v.created,
        v.token.id,
        v.token.description,
        v.changeDescription,
        v.versionIdentifier,
        v.name,
        v.description,
        v.configuration,
        flag(v.isDisabled),
        flag(v.isDeleted),
        JSON.stringify(v.rowsSortOrder),
        JSON.stringify(v.rows),
      ],
    );
  }

  async listConfigVersions(key: ConfigKey, limit: number, offset: number): Promise<ConfigVersionRecord[]> {
    const rows = await this.tx.all<DbRow>(
      `SELECT * FROM configuration_versions WHERE project_id = ? AND component_id = ? AND configuration_id = ?
       ORDER BY version DESC LIMIT ? OFFSET ?`,
      [...keyParams(key), limit, offset],
    );
    return rows.map(configVersionFromDb);
  }

  async loadConfigVersion(key: ConfigKey, version: number): Promise<ConfigVersionRecord | undefined> {
    const r = await this.tx.get<DbRow>(
      'SELECT * FROM configuration_versions WHERE project_id = ? AND component_id = ? AND configuration_id = ? AND version = ?',
      [...keyParams(key), version],
    );
    return r ? configVersionFromDb(r) : undefined;
  }

  /** Rows of a configuration; deleted ones are kept for their state and version counter. */
  async loadRows(key: ConfigKey, includeDeleted = false): Promise<RowRecord[]> {
    const rows = await this.tx.all<DbRow>(
      `SELECT * FROM configuration_rows WHERE project_id = ? AND component_id = ? AND configuration_id = ?${includeDeleted ? '' : ' AND is_deleted = 0'}`,
      keyParams(key),
    );
    return rows.map(rowFromDb);
  }

  /** Live rows of many configurations of a component at once (list calls). */
  async loadRowsOfComponent(projectId: number, componentId: string): Promise<RowRecord[]> {
    const rows = await this.tx.all<DbRow>('SELECT * FROM configuration_rows WHERE project_id = ? AND component_id = ? AND is_deleted = 0', [projectId, componentId]);
    return rows.map(rowFromDb);
  }

  async loadRow(key: ConfigKey, rowId: string): Promise<RowRecord | undefined> {
    const r = await this.tx.get<DbRow>(
      'SELECT * FROM configuration_rows WHERE project_id = ? AND component_id = ? AND configuration_id = ? AND id = ?',
      [...keyParams(key), rowId],
    );
    return r ? rowFromDb(r) : undefined;
  }

  async saveRow(r: RowRecord): Promise<void> {
    await this.tx.run(
      `INSERT INTO configuration_rows (project_id, component_id, configuration_id, id, created, creator_token_id, creator_token_description,
         version, name, description, configuration, is_disabled, change_description, version_identifier, version_created,
         version_token_id, version_token_description, state, is_deleted)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (project_id, component_id, configuration_id, id) DO UPDATE SET
         created = excluded.created, creator_token_id = excluded.creator_token_id, creator_token_description = excluded.creator_token_description,
         version = excluded.version, name = excluded.name, description = excluded.description, configuration = excluded.configuration,
         is_disabled = excluded.is_disabled, change_description = excluded.change_description,
         version_identifier = excluded.version_identifier, version_created = excluded.version_created,
         version_token_id = excluded.version_token_id, version_token_description = excluded.version_token_description,
         state = excluded.state, is_deleted = excluded.is_deleted`,
      [
        ...keyParams(r),
        r.rowId,
        r.created,
        r.creator.id,
        r.creator.description,
        r.current.version,
        r.name,
        r.description,
        r.configuration,
        flag(r.isDisabled),
        r.current.changeDescription,
        r.current.versionIdentifier,
        r.current.created,
        r.current.token.id,
        r.current.token.description,
        r.state,
        flag(r.isDeleted),
      ],
    );
  }

  async saveRowState(key: ConfigKey, rowId: string, state: string): Promise<void> {
    await this.tx.run('UPDATE configuration_rows SET state = ? WHERE project_id = ? AND component_id = ? AND configuration_id = ? AND id = ?', [
      state,
      ...keyParams(key),
      rowId,
    ]);
  }

  async insertRowVersion(key: ConfigKey, v: RowVersionRecord): Promise<void> {
    await this.tx.run(
      `INSERT INTO row_versions (project_id, component_id, configuration_id, row_id, version, created, token_id, token_description,
         change_description, version_identifier, name, description, configuration, is_disabled)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        ...keyParams(key),
        v.rowId,
        v.version,
        v.created,
        v.token.id,
        v.token.description,
        v.changeDescription,
        v.versionIdentifier,
        v.name,
        v.description,
        v.configuration,
        flag(v.isDisabled),
      ],
    );
  }

  async listRowVersions(key: ConfigKey, rowId: string, limit: number, offset: number): Promise<RowVersionRecord[]> {
    const rows = await this.tx.all<DbRow>(
      `SELECT * FROM row_versions WHERE project_id = ? AND component_id = ? AND configuration_id = ? AND row_id = ?
       ORDER BY version DESC LIMIT ? OFFSET ?`,
      [...keyParams(key), rowId, limit, offset],
    );
    return rows.map(rowVersionFromDb);
  }

  async loadRowVersion(key: ConfigKey, rowId: string, version: number): Promise<RowVersionRecord | undefined> {
    const r = await this.tx.get<DbRow>(
      'SELECT * FROM row_versions WHERE project_id = ? AND component_id = ? AND configuration_id = ? AND row_id = ? AND version = ?',
      [...keyParams(key), rowId, version],
    );
    return r ? rowVersionFromDb(r) : undefined;
  }

  /** Removes a configuration with its history, rows and metadata (purge). */
  async purgeConfig(key: ConfigKey): Promise<void> {
    for (const table of ['configuration_metadata', 'row_versions', 'configuration_rows', 'configuration_versions']) {
      await this.tx.run(`DELETE FROM ${table} WHERE project_id = ? AND component_id = ? AND configuration_id = ?`, keyParams(key));
    }
    await this.tx.run('DELETE FROM configurations WHERE project_id = ? AND component_id = ? AND id = ?', keyParams(key));
  }

  async listMetadata(key: ConfigKey): Promise<DbRow[]> {
    return this.tx.all<DbRow>(
      'SELECT * FROM configuration_metadata WHERE project_id = ? AND component_id = ? AND configuration_id = ? ORDER BY id',
      keyParams(key),
    );
  }

  async upsertMetadata(key: ConfigKey, id: number, metaKey: string, value: string, timestamp: string): Promise<void> {
    await this.tx.run(
      `INSERT INTO configuration_metadata (id, project_id, component_id, configuration_id, meta_key, meta_value, provider, timestamp)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (project_id, component_id, configuration_id, meta_key) DO UPDATE SET meta_value = excluded.meta_value, timestamp = excluded.timestamp`,
      [id, ...keyParams(key), metaKey, value, 'user', timestamp],
    );
  }

  async deleteMetadata(key: ConfigKey, id: string): Promise<number> {
    const { changes } = await this.tx.run(
      'DELETE FROM configuration_metadata WHERE project_id = ? AND component_id = ? AND configuration_id = ? AND id = ?',
      [...keyParams(key), Number(id)],
    );
    return changes;
  }
}
