import type { Dialect, SqlExecutor } from '../sql/database.js';
import { insertBatches, insertSql, insertValues, selectSql, upsertSql, type Table } from '../sql/table.js';
import type { Component, ConfigMetadataItem, ConfigurationSummaries, TokenInfo } from '../types.js';
import type {
  ConfigKey,
  ConfigRecord,
  ConfigVersionRecord,
  MetadataRecord,
  ProjectRecord,
  RowRecord,
  RowVersionRecord,
  TokenRecord,
} from './records.js';
import {
  COMPONENTS,
  componentFromDb,
  CONFIG_KEY,
  CONFIG_WHERE,
  configFromDb,
  summaryFromDb,
  CONFIGURATION_METADATA,
  CONFIGURATION_ROWS,
  CONFIGURATION_VERSIONS,
  CONFIGURATIONS,
  configVersionFromDb,
  keyParams,
  metadataFromDb,
  OWNED_BY_CONFIG_KEY,
  OWNED_WHERE,
  PROJECTS,
  ROW_VERSIONS,
  rowFromDb,
  rowVersionFromDb,
  TOKENS,
  tokenInfoFromDb,
  VERSION_ROW_ORDER,
  type DbRow,
} from './tables.js';
import { VersionHoldings } from './version-holdings.js';

const TOKEN_WITH_PROJECT =
  'SELECT t.id, t.description, t.read_only, t.can_manage_tokens, t.runner, t.created, t.refreshed, t.creator_token_id, t.creator_token_description, t.internal, ' +
  'p.id AS project_id, p.name AS project_name FROM tokens t JOIN projects p ON p.id = t.project_id';

/**
 * All SQL of the embedded store, over one transaction (or the database itself for a single
 * read). Statements are generated from the table descriptions in tables.ts; each is written
 * once with `?` placeholders and runs on SQLite and PostgreSQL alike.
 */
export class Repository {
  /** what each configuration version holds: the ranges of row versions and of the custom order */
  readonly holdings: VersionHoldings;
  private readonly forUpdate: string;
  /** appended to text columns in ORDER BY: ids sort by bytes on both databases */
  private readonly byteOrder: string;

  constructor(
    private readonly tx: SqlExecutor,
    dialect: Dialect,
  ) {
    this.forUpdate = dialect.forUpdate;
    this.byteOrder = dialect.byteOrder;
    this.holdings = new VersionHoldings(tx);
  }

  // ---- components and settings ----------------------------------------------------------------

  async loadComponent(id: string): Promise<Component | undefined> {
    const r = await this.tx.get<DbRow>(`${selectSql(COMPONENTS)} WHERE id = ?`, [id]);
    return r ? componentFromDb(r) : undefined;
  }

  async componentExists(id: string): Promise<boolean> {
    return (await this.tx.get<DbRow>('SELECT 1 AS found FROM components WHERE id = ?', [id])) !== undefined;
  }

  async listComponents(): Promise<Component[]> {
    return (await this.tx.all<DbRow>(`${selectSql(COMPONENTS)} ORDER BY id${this.byteOrder}`)).map(componentFromDb);
  }

  /** Registers or replaces a component; `builtin` marks one the store registers itself on open. */
  async saveComponent(component: Component, origin: { builtin: boolean }): Promise<void> {
    const row = { ...component, builtin: origin.builtin };
    await this.tx.run(upsertSql(COMPONENTS, ['id']), insertValues(COMPONENTS, row));
  }

  /** A store-wide setting, or undefined. */
  async loadSetting(name: string): Promise<string | undefined> {
    const row = await this.tx.get<DbRow>('SELECT value FROM store_settings WHERE name = ?', [name]);
    return row ? String(row.value ?? '') : undefined;
  }

  /** Sets a setting unless it is set already (the first of concurrent writers wins). */
  async initSetting(name: string, value: string): Promise<void> {
    await this.tx.run('INSERT INTO store_settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', [
      name,
      value,
    ]);
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
    return Number(row!.value);
  }

  /** Reserves the next `count` values of a named counter at once; returns the first (like `nextSequence`, atomic). */
  async reserveSequence(name: string, count: number): Promise<number> {
    const row = await this.tx.get<DbRow>(
      'INSERT INTO sequences (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = sequences.value + ? RETURNING value',
      [name, count, count],
    );
    return Number(row!.value) - count + 1;
  }

  // ---- projects and tokens --------------------------------------------------------------------

  async projectIdByName(name: string): Promise<number | undefined> {
    const row = await this.tx.get<DbRow>('SELECT id FROM projects WHERE name = ?', [name]);
    return row ? Number(row.id) : undefined;
  }

  /** Inserts a project unless one of that name exists (a concurrent creator's row wins). */
  async insertProjectUnlessNamed(project: ProjectRecord): Promise<void> {
    await this.tx.run(upsertSql(PROJECTS, ['name'], 'nothing'), insertValues(PROJECTS, project));
  }

  /** Locks the project's row until the transaction ends (PostgreSQL; SQLite runs writers one at a time). */
  async lockProject(projectId: number): Promise<void> {
    await this.tx.get(`SELECT id FROM projects WHERE id = ?${this.forUpdate}`, [projectId]);
  }

  /** The token of that hash with its project, and whether it is a project's internal token. */
  async tokenByHash(tokenHash: string): Promise<{ info: TokenInfo; internal: boolean } | undefined> {
    const row = await this.tx.get<DbRow>(`${TOKEN_WITH_PROJECT} WHERE t.token_hash = ?`, [tokenHash]);
    return row ? { info: tokenInfoFromDb(row), internal: Number(row.internal) === 1 } : undefined;
  }

  /** Any token by id, a project's internal one included (what a schedule fires on behalf of). */
  async tokenById(id: number): Promise<TokenInfo | undefined> {
    const row = await this.tx.get<DbRow>(`${TOKEN_WITH_PROJECT} WHERE t.id = ?`, [id]);
    return row ? tokenInfoFromDb(row) : undefined;
  }

  /** The project's internal token (local access), if made already. */
  async internalTokenOf(projectId: number): Promise<TokenInfo | undefined> {
    const row = await this.tx.get<DbRow>(`${TOKEN_WITH_PROJECT} WHERE t.project_id = ? AND t.internal = 1`, [
      projectId,
    ]);
    return row ? tokenInfoFromDb(row) : undefined;
  }

  /** The tokens people use (not the projects' internal ones), oldest first; one project's when given. */
  async listTokens(projectId?: number): Promise<TokenInfo[]> {
    const rows =
      projectId === undefined
        ? await this.tx.all<DbRow>(`${TOKEN_WITH_PROJECT} WHERE t.internal = 0 ORDER BY t.id`)
        : await this.tx.all<DbRow>(`${TOKEN_WITH_PROJECT} WHERE t.internal = 0 AND t.project_id = ? ORDER BY t.id`, [
            projectId,
          ]);
    return rows.map(tokenInfoFromDb);
  }

  /** A project's token that is not internal; with `lock`, its row is locked until the transaction ends (PostgreSQL). */
  async projectToken(projectId: number, id: number, options: { lock?: boolean } = {}): Promise<TokenInfo | undefined> {
    const lock = options.lock && this.forUpdate ? ' FOR UPDATE OF t' : '';
    const row = await this.tx.get<DbRow>(
      `${TOKEN_WITH_PROJECT} WHERE t.id = ? AND t.project_id = ? AND t.internal = 0${lock}`,
      [id, projectId],
    );
    return row ? tokenInfoFromDb(row) : undefined;
  }

  /** Gives a token a new hash (a new secret); the old secret stops working when this commits. */
  async replaceTokenHash(id: number, tokenHash: string, refreshed: string): Promise<void> {
    await this.tx.run('UPDATE tokens SET token_hash = ?, refreshed = ? WHERE id = ? AND internal = 0', [
      tokenHash,
      refreshed,
      id,
    ]);
  }

  /** Deletes a token that is not internal; whether there was one. */
  async deleteToken(id: number): Promise<boolean> {
    return (await this.tx.run('DELETE FROM tokens WHERE id = ? AND internal = 0', [id])).changes > 0;
  }

  async insertToken(token: TokenRecord): Promise<void> {
    await this.tx.run(insertSql(TOKENS), insertValues(TOKENS, token));
  }

  // ---- configurations ---------------------------------------------------------------------------

  async loadConfig(key: ConfigKey): Promise<ConfigRecord | undefined> {
    const r = await this.tx.get<DbRow>(`${selectSql(CONFIGURATIONS)} WHERE ${CONFIG_WHERE}`, keyParams(key));
    return r ? configFromDb(r) : undefined;
  }

  /**
   * The configuration's record, locked until the transaction ends: the writers of one
   * configuration queue here (PostgreSQL's row lock; SQLite runs writers one at a time).
   */
  async loadConfigForUpdate(key: ConfigKey): Promise<ConfigRecord | undefined> {
    const r = await this.tx.get<DbRow>(
      `${selectSql(CONFIGURATIONS)} WHERE ${CONFIG_WHERE}${this.forUpdate}`,
      keyParams(key),
    );
    return r ? configFromDb(r) : undefined;
  }

  async listConfigs(projectId: number, componentId: string | null, deleted: boolean): Promise<ConfigRecord[]> {
    const deletedFlag = deleted ? 1 : 0;
    const rows =
      componentId === null
        ? await this.tx.all<DbRow>(
            `${selectSql(CONFIGURATIONS)} WHERE project_id = ? AND is_deleted = ? ORDER BY component_id${this.byteOrder}, id${this.byteOrder}`,
            [projectId, deletedFlag],
          )
        : await this.tx.all<DbRow>(
            `${selectSql(CONFIGURATIONS)} WHERE project_id = ? AND component_id = ? AND is_deleted = ? ORDER BY id${this.byteOrder}`,
            [projectId, componentId, deletedFlag],
          );
    return rows.map(configFromDb);
  }

  /** A page of the project's live configurations, without their bodies, and how many there are. */
  async listConfigSummaries(
    projectId: number,
    page: { componentId?: string; limit: number; offset: number },
  ): Promise<ConfigurationSummaries> {
    const where = `WHERE project_id = ? AND is_deleted = 0${page.componentId === undefined ? '' : ' AND component_id = ?'}`;
    const params = page.componentId === undefined ? [projectId] : [projectId, page.componentId];
    const items = await this.tx.all<DbRow>(
      `SELECT component_id, id, name, is_disabled, version FROM configurations ${where}
        ORDER BY component_id${this.byteOrder}, id${this.byteOrder} LIMIT ? OFFSET ?`,
      [...params, page.limit, page.offset],
    );
    const count = await this.tx.get<DbRow>(`SELECT COUNT(*) AS n FROM configurations ${where}`, params);
    return { total: Number(count?.n ?? 0), items: items.map(summaryFromDb) };
  }

  async saveConfig(c: ConfigRecord): Promise<void> {
    await this.tx.run(upsertSql(CONFIGURATIONS, CONFIG_KEY), insertValues(CONFIGURATIONS, c));
  }

  async saveConfigState(key: ConfigKey, state: string): Promise<void> {
    await this.tx.run(`UPDATE configurations SET state = ? WHERE ${CONFIG_WHERE}`, [state, ...keyParams(key)]);
  }

  /** Removes a configuration with its history, rows and metadata (purge). */
  async purgeConfig(key: ConfigKey): Promise<void> {
    for (const table of [
      CONFIGURATION_METADATA,
      VERSION_ROW_ORDER,
      ROW_VERSIONS,
      CONFIGURATION_ROWS,
      CONFIGURATION_VERSIONS,
    ]) {
      await this.tx.run(`DELETE FROM ${table.name} WHERE ${OWNED_WHERE}`, keyParams(key));
    }
    await this.tx.run(`DELETE FROM ${CONFIGURATIONS.name} WHERE ${CONFIG_WHERE}`, keyParams(key));
  }

  async insertConfigVersion(key: ConfigKey, v: ConfigVersionRecord): Promise<void> {
    const row = { projectId: key.projectId, componentId: key.componentId, configId: key.configId, ...v };
    await this.tx.run(insertSql(CONFIGURATION_VERSIONS), insertValues(CONFIGURATION_VERSIONS, row));
  }

  async listConfigVersions(key: ConfigKey, limit: number, offset: number): Promise<ConfigVersionRecord[]> {
    const rows = await this.tx.all<DbRow>(
      `${selectSql(CONFIGURATION_VERSIONS)} WHERE ${OWNED_WHERE} ORDER BY version DESC LIMIT ? OFFSET ?`,
      [...keyParams(key), limit, offset],
    );
    return rows.map(configVersionFromDb);
  }

  async loadConfigVersion(key: ConfigKey, version: number): Promise<ConfigVersionRecord | undefined> {
    const r = await this.tx.get<DbRow>(`${selectSql(CONFIGURATION_VERSIONS)} WHERE ${OWNED_WHERE} AND version = ?`, [
      ...keyParams(key),
      version,
    ]);
    return r ? configVersionFromDb(r) : undefined;
  }

  /** Inserts many records in few statements. */
  private async insertMany<R>(table: Table<R>, records: Iterable<R>, conflict?: readonly string[]): Promise<void> {
    for (const [sql, params] of insertBatches(table, records, conflict)) await this.tx.run(sql, params);
  }

  // ---- rows -------------------------------------------------------------------------------------

  /** Live rows of a configuration. */
  async loadRows(key: ConfigKey): Promise<RowRecord[]> {
    return (
      await this.tx.all<DbRow>(
        `${selectSql(CONFIGURATION_ROWS)} WHERE ${OWNED_WHERE} AND is_deleted = 0`,
        keyParams(key),
      )
    ).map(rowFromDb);
  }

  /** Every row of a configuration: deleted ones are kept for their state and version counter. */
  async loadRowsIncludingDeleted(key: ConfigKey): Promise<RowRecord[]> {
    return (await this.tx.all<DbRow>(`${selectSql(CONFIGURATION_ROWS)} WHERE ${OWNED_WHERE}`, keyParams(key))).map(
      rowFromDb,
    );
  }

  /** Live rows of many configurations of a component at once (list calls). */
  async loadRowsOfComponent(projectId: number, componentId: string): Promise<RowRecord[]> {
    const rows = await this.tx.all<DbRow>(
      `${selectSql(CONFIGURATION_ROWS)} WHERE project_id = ? AND component_id = ? AND is_deleted = 0`,
      [projectId, componentId],
    );
    return rows.map(rowFromDb);
  }

  async loadRow(key: ConfigKey, rowId: string): Promise<RowRecord | undefined> {
    const r = await this.tx.get<DbRow>(`${selectSql(CONFIGURATION_ROWS)} WHERE ${OWNED_WHERE} AND id = ?`, [
      ...keyParams(key),
      rowId,
    ]);
    return r ? rowFromDb(r) : undefined;
  }

  async saveRow(r: RowRecord): Promise<void> {
    await this.tx.run(
      upsertSql(CONFIGURATION_ROWS, [...OWNED_BY_CONFIG_KEY, 'id']),
      insertValues(CONFIGURATION_ROWS, r),
    );
  }

  async saveRowState(key: ConfigKey, rowId: string, state: string): Promise<void> {
    await this.tx.run(`UPDATE configuration_rows SET state = ? WHERE ${OWNED_WHERE} AND id = ?`, [
      state,
      ...keyParams(key),
      rowId,
    ]);
  }

  /**
   * Saves rows, each with its current version as a new row version held from configuration
   * version `heldFrom` on; many rows in few statements.
   */
  async saveRowsWithVersions(rows: readonly RowRecord[], heldFrom: number): Promise<void> {
    await this.insertMany(CONFIGURATION_ROWS, rows, [...OWNED_BY_CONFIG_KEY, 'id']);
    await this.insertMany(
      ROW_VERSIONS,
      rows.map((r) => ({
        ...r.current,
        projectId: r.projectId,
        componentId: r.componentId,
        configId: r.configId,
        rowId: r.rowId,
        name: r.name,
        description: r.description,
        configuration: r.configuration,
        isDisabled: r.isDisabled,
        heldFrom,
        heldUntil: null,
      })),
    );
  }

  async listRowVersions(key: ConfigKey, rowId: string, limit: number, offset: number): Promise<RowVersionRecord[]> {
    const rows = await this.tx.all<DbRow>(
      `${selectSql(ROW_VERSIONS)} WHERE ${OWNED_WHERE} AND row_id = ? ORDER BY version DESC LIMIT ? OFFSET ?`,
      [...keyParams(key), rowId, limit, offset],
    );
    return rows.map(rowVersionFromDb);
  }

  async loadRowVersion(key: ConfigKey, rowId: string, version: number): Promise<RowVersionRecord | undefined> {
    const r = await this.tx.get<DbRow>(
      `${selectSql(ROW_VERSIONS)} WHERE ${OWNED_WHERE} AND row_id = ? AND version = ?`,
      [...keyParams(key), rowId, version],
    );
    return r ? rowVersionFromDb(r) : undefined;
  }

  // ---- metadata ---------------------------------------------------------------------------------

  async listMetadata(key: ConfigKey): Promise<ConfigMetadataItem[]> {
    return (
      await this.tx.all<DbRow>(`${selectSql(CONFIGURATION_METADATA)} WHERE ${OWNED_WHERE} ORDER BY id`, keyParams(key))
    ).map(metadataFromDb);
  }

  /** Adds an item, or sets the value and timestamp of the configuration's item of that key. */
  async upsertMetadata(item: MetadataRecord): Promise<void> {
    await this.tx.run(
      upsertSql(CONFIGURATION_METADATA, [...OWNED_BY_CONFIG_KEY, 'meta_key'], ['meta_value', 'timestamp']),
      insertValues(CONFIGURATION_METADATA, item),
    );
  }

  /** Deletes an item by id; returns how many were deleted (0 or 1). */
  async deleteMetadata(key: ConfigKey, id: number): Promise<number> {
    const { changes } = await this.tx.run(`DELETE FROM configuration_metadata WHERE ${OWNED_WHERE} AND id = ?`, [
      ...keyParams(key),
      id,
    ]);
    return changes;
  }
}
