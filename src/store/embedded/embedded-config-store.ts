import type { JsonValue } from '../../json/index.js';
import type { ConfigStore, StateWrite } from '../config-store.js';
import type { SecretCipher } from '../encryption.js';
import type { Database } from '../sql/database.js';
import { joinedTransaction } from '../sql/joined-transaction.js';
import { StoreError } from '../store-error.js';
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
} from '../types.js';
import * as versions from './config-versions.js';
import * as configurationImport from './configuration-import.js';
import * as configurations from './configurations.js';
import * as metadata from './metadata.js';
import { replaceConfiguration } from './replace-configuration.js';
import * as rowVersions from './row-versions.js';
import * as rows from './rows.js';
import { ProjectSession } from './session.js';
import * as states from './states.js';

/**
 * The configurations of one project as one token sees them (the Storage API's Component
 * Configurations service) over the embedded database. Each call is one operation of a module
 * by concern — configurations, config-versions, rows, row-versions, states, metadata — over the
 * token's ProjectSession.
 */
export class EmbeddedConfigStore implements ConfigStore {
  private readonly s: ProjectSession;

  constructor(
    private readonly db: Database,
    private readonly cipher: SecretCipher,
    readonly session: TokenInfo,
  ) {
    this.s = new ProjectSession(db, cipher, session);
  }

  inTransaction<T>(work: (store: ConfigStore) => Promise<T>): Promise<T> {
    if (this.session.readOnly) return Promise.reject(StoreError.accessDenied());
    return this.db.transaction((tx) =>
      work(new EmbeddedConfigStore(joinedTransaction(this.db, tx), this.cipher, this.session)),
    );
  }

  async verifyToken(): Promise<TokenInfo> {
    return this.session;
  }

  getComponent(componentId: string): Promise<Component> {
    return configurations.getComponent(this.s, componentId);
  }

  listComponents(options?: {
    componentType?: string;
    include?: ListInclude[];
    isDeleted?: boolean;
  }): Promise<ComponentWithConfigurations[]> {
    return configurations.listComponents(this.s, options);
  }

  listConfigurations(componentId: string, options?: { isDeleted?: boolean }): Promise<Configuration[]> {
    return configurations.listConfigurations(this.s, componentId, options);
  }

  listConfigurationSummaries(page: {
    componentId?: string;
    limit: number;
    offset: number;
  }): Promise<ConfigurationSummaries> {
    return this.s.read((repo) => repo.listConfigSummaries(this.s.info.projectId, page));
  }

  createConfiguration(componentId: string, input: CreateConfigurationInput): Promise<Configuration> {
    return configurations.createConfiguration(this.s, componentId, input);
  }

  importConfiguration(componentId: string, input: ImportConfigurationInput): Promise<Configuration> {
    return configurationImport.importConfiguration(this.s, componentId, input);
  }

  getConfiguration(componentId: string, configId: string): Promise<Configuration> {
    return configurations.getConfiguration(this.s, componentId, configId);
  }

  updateConfiguration(componentId: string, configId: string, input: UpdateConfigurationInput): Promise<Configuration> {
    return configurations.updateConfiguration(this.s, componentId, configId, input);
  }

  replaceConfiguration(
    componentId: string,
    configId: string,
    input: ReplaceConfigurationInput,
  ): Promise<Configuration> {
    return replaceConfiguration(this.s, componentId, configId, input);
  }

  deleteConfiguration(componentId: string, configId: string): Promise<void> {
    return configurations.deleteConfiguration(this.s, componentId, configId);
  }

  restoreConfiguration(componentId: string, configId: string): Promise<Configuration> {
    return configurations.restoreConfiguration(this.s, componentId, configId);
  }

  listConfigurationVersions(
    componentId: string,
    configId: string,
    options?: VersionListOptions,
  ): Promise<ConfigVersionItem[]> {
    return versions.listConfigurationVersions(this.s, componentId, configId, options);
  }

  getConfigurationVersion(componentId: string, configId: string, version: number): Promise<ConfigVersionDetail> {
    return versions.getConfigurationVersion(this.s, componentId, configId, version);
  }

  rollbackConfiguration(
    componentId: string,
    configId: string,
    version: number,
    changeDescription?: string,
  ): Promise<{ version: number }> {
    return versions.rollbackConfiguration(this.s, componentId, configId, version, changeDescription);
  }

  copyConfiguration(
    componentId: string,
    configId: string,
    version: number,
    input: CopyConfigurationInput,
  ): Promise<Configuration> {
    return versions.copyConfiguration(this.s, componentId, configId, version, input);
  }

  listRows(componentId: string, configId: string): Promise<Row[]> {
    return rows.listRows(this.s, componentId, configId);
  }

  createRow(componentId: string, configId: string, input: CreateRowInput): Promise<Row> {
    return rows.createRow(this.s, componentId, configId, input);
  }

  getRow(componentId: string, configId: string, rowId: string): Promise<Row> {
    return rows.getRow(this.s, componentId, configId, rowId);
  }

  updateRow(componentId: string, configId: string, rowId: string, input: UpdateRowInput): Promise<Row> {
    return rows.updateRow(this.s, componentId, configId, rowId, input);
  }

  deleteRow(componentId: string, configId: string, rowId: string, changeDescription?: string): Promise<void> {
    return rows.deleteRow(this.s, componentId, configId, rowId, changeDescription);
  }

  listRowVersions(
    componentId: string,
    configId: string,
    rowId: string,
    options?: VersionListOptions,
  ): Promise<RowVersion[]> {
    return rowVersions.listRowVersions(this.s, componentId, configId, rowId, options);
  }

  getRowVersion(componentId: string, configId: string, rowId: string, version: number): Promise<RowVersion> {
    return rowVersions.getRowVersion(this.s, componentId, configId, rowId, version);
  }

  rollbackRow(
    componentId: string,
    configId: string,
    rowId: string,
    version: number,
    changeDescription?: string,
  ): Promise<Row> {
    return rowVersions.rollbackRow(this.s, componentId, configId, rowId, version, changeDescription);
  }

  copyRow(
    componentId: string,
    configId: string,
    rowId: string,
    version: number,
    options?: { targetConfigId?: string; changeDescription?: string },
  ): Promise<Row> {
    return rowVersions.copyRow(this.s, componentId, configId, rowId, version, options);
  }

  updateConfigurationState(componentId: string, configId: string, state: JsonValue): Promise<Configuration> {
    return states.updateConfigurationState(this.s, componentId, configId, state);
  }

  updateRowState(componentId: string, configId: string, rowId: string, state: JsonValue): Promise<Row> {
    return states.updateRowState(this.s, componentId, configId, rowId, state);
  }

  saveStates(componentId: string, configId: string, writes: StateWrite[]): Promise<void> {
    return states.saveStates(this.s, componentId, configId, writes);
  }

  addMetadata(
    componentId: string,
    configId: string,
    items: Array<{ key: string; value: string }>,
  ): Promise<ConfigMetadataItem[]> {
    return metadata.addMetadata(this.s, componentId, configId, items);
  }

  listMetadata(componentId: string, configId: string): Promise<ConfigMetadataItem[]> {
    return metadata.listMetadata(this.s, componentId, configId);
  }

  deleteMetadata(componentId: string, configId: string, metadataId: string): Promise<void> {
    return metadata.deleteMetadata(this.s, componentId, configId, metadataId);
  }
}
