import type { JsonValue } from '../json/index.js';
import type {
  ConfigurationSummaries,
  Component,
  ComponentWithConfigurations,
  ConfigVersionDetail,
  ConfigVersionItem,
  Configuration,
  CopyConfigurationInput,
  CreateConfigurationInput,
  CreateRowInput,
  ImportConfigurationInput,
  ListInclude,
  ConfigMetadataItem,
  Row,
  RowVersion,
  TokenInfo,
  UpdateConfigurationInput,
  ReplaceConfigurationInput,
  UpdateRowInput,
  VersionListOptions,
} from './types.js';

/** One state for `saveStates`: a row's (`rowId`) or the configuration's own (`rowId` null). */
export interface StateWrite {
  rowId: string | null;
  state: JsonValue;
}

/**
 * The Component Configurations service, seen by one token (its project and permissions).
 * Implemented by the embedded store (SQLite, PostgreSQL) and by the HTTP client of a remote
 * Storage API (gex's own server or a real Keboola stack). Failures throw StoreError.
 */
export interface ConfigStore {
  verifyToken(): Promise<TokenInfo>;

  /**
   * Runs `work` on a view of this store whose every change belongs to one transaction: all are
   * kept, or none (when `work` throws). Only the embedded store has it; a Storage API changes one
   * resource per call, so callers that need all-or-nothing there undo what they did themselves.
   */
  inTransaction?<T>(work: (store: ConfigStore) => Promise<T>): Promise<T>;

  getComponent(componentId: string): Promise<Component>;
  /** components that have at least one matching configuration, with those configurations */
  listComponents(options?: {
    componentType?: string;
    include?: ListInclude[];
    isDeleted?: boolean;
  }): Promise<ComponentWithConfigurations[]>;

  listConfigurations(componentId: string, options?: { isDeleted?: boolean }): Promise<Configuration[]>;
  /**
   * A page of the live configurations (by component id, then id) without their bodies, rows or
   * state, and how many there are: what a long listing needs. Only the embedded store has it.
   */
  listConfigurationSummaries?(page: {
    componentId?: string;
    limit: number;
    offset: number;
  }): Promise<ConfigurationSummaries>;
  createConfiguration(componentId: string, input: CreateConfigurationInput): Promise<Configuration>;
  /**
   * Creates a configuration with its rows and their order as one change, all or nothing: one
   * configuration version, each row at its first row version (as a copy from a version makes).
   * Only the embedded store has it; over a Storage API every row is a call and a version of its
   * own. A failure is an ImportStepFailed naming the step (`rows[2] (id a)`).
   */
  importConfiguration?(componentId: string, input: ImportConfigurationInput): Promise<Configuration>;
  getConfiguration(componentId: string, configId: string): Promise<Configuration>;
  /**
   * Makes a live configuration the one given — fields, rows and their order — as ONE new version,
   * all or nothing. Only the embedded store has it: a Storage API changes one row per call, each a
   * version of its own.
   */
  replaceConfiguration?(
    componentId: string,
    configId: string,
    input: ReplaceConfigurationInput,
  ): Promise<Configuration>;
  updateConfiguration(componentId: string, configId: string, input: UpdateConfigurationInput): Promise<Configuration>;
  updateConfigurationState(componentId: string, configId: string, state: JsonValue): Promise<Configuration>;
  /** first call moves to trash, second purges */
  deleteConfiguration(componentId: string, configId: string): Promise<void>;
  restoreConfiguration(componentId: string, configId: string): Promise<Configuration>;

  listConfigurationVersions(
    componentId: string,
    configId: string,
    options?: VersionListOptions,
  ): Promise<ConfigVersionItem[]>;
  getConfigurationVersion(componentId: string, configId: string, version: number): Promise<ConfigVersionDetail>;
  rollbackConfiguration(
    componentId: string,
    configId: string,
    version: number,
    changeDescription?: string,
  ): Promise<{ version: number }>;
  copyConfiguration(
    componentId: string,
    configId: string,
    version: number,
    input: CopyConfigurationInput,
  ): Promise<Configuration>;

  listRows(componentId: string, configId: string): Promise<Row[]>;
  createRow(componentId: string, configId: string, input: CreateRowInput): Promise<Row>;
  getRow(componentId: string, configId: string, rowId: string): Promise<Row>;
  updateRow(componentId: string, configId: string, rowId: string, input: UpdateRowInput): Promise<Row>;
  updateRowState(componentId: string, configId: string, rowId: string, state: JsonValue): Promise<Row>;
  /**
   * Saves several states of one configuration (its own and its rows') as one change. The embedded
   * store checks every state (row exists, size) and then writes them all in one transaction under
   * the configuration's lock: all are saved, or none (the error says why). A remote Storage API has
   * no such call: the states are saved one by one, and when one fails the ones saved before it are
   * put back to what they were — the error is then a StateSaveFailed saying what was restored and
   * what could not be.
   */
  saveStates(componentId: string, configId: string, writes: StateWrite[]): Promise<void>;
  deleteRow(componentId: string, configId: string, rowId: string, changeDescription?: string): Promise<void>;
  listRowVersions(
    componentId: string,
    configId: string,
    rowId: string,
    options?: VersionListOptions,
  ): Promise<RowVersion[]>;
  getRowVersion(componentId: string, configId: string, rowId: string, version: number): Promise<RowVersion>;
  rollbackRow(
    componentId: string,
    configId: string,
    rowId: string,
    version: number,
    changeDescription?: string,
  ): Promise<Row>;
  copyRow(
    componentId: string,
    configId: string,
    rowId: string,
    version: number,
    options?: { targetConfigId?: string; changeDescription?: string },
  ): Promise<Row>;

  addMetadata(
    componentId: string,
    configId: string,
    metadata: Array<{ key: string; value: string }>,
  ): Promise<ConfigMetadataItem[]>;
  listMetadata(componentId: string, configId: string): Promise<ConfigMetadataItem[]>;
  deleteMetadata(componentId: string, configId: string, metadataId: string): Promise<void>;
}
