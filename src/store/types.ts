import type { JsonValue } from '../json/index.js';

/**
 * Resources of the Component Configurations service (Keboola Storage API v2 shapes).
 * `configuration` and `state` bodies are kept in gex's lossless value model so that they
 * round-trip exactly (`[]` vs `{}`, key order, `1` vs `1.0`).
 */

export interface TokenRef {
  id: number;
  description: string;
}

export interface CurrentVersion {
  created: string;
  creatorToken: TokenRef;
  changeDescription: string;
  versionIdentifier: string;
}

export interface Row {
  id: string;
  name: string;
  description: string;
  isDisabled: boolean;
  configuration: JsonValue;
  state: JsonValue;
  version: number;
  created: string;
  creatorToken: TokenRef;
  changeDescription: string;
  versionIdentifier: string;
}

export interface Configuration {
  id: string;
  name: string;
  description: string;
  created: string;
  creatorToken: TokenRef;
  version: number;
  changeDescription: string;
  isDisabled: boolean;
  isDeleted: boolean;
  configuration: JsonValue;
  rowsSortOrder: string[];
  rows: Row[];
  state: JsonValue;
  currentVersion: CurrentVersion;
}

export interface ConfigVersionItem {
  version: number;
  created: string;
  versionIdentifier: string;
  creatorToken: TokenRef;
  changeDescription: string;
  isDeleted: boolean;
  name?: string;
  description?: string;
  configuration?: JsonValue;
}

/** A row as stored in a configuration version: no state. */
export type VersionRow = Omit<Row, 'state'>;

export interface ConfigVersionDetail extends ConfigVersionItem {
  name: string;
  description: string;
  configuration: JsonValue;
  isDisabled: boolean;
  rowsSortOrder: string[];
  rows: VersionRow[];
}

export interface RowVersion {
  version: number;
  name: string;
  description: string;
  isDisabled: boolean;
  created: string;
  creatorToken: TokenRef;
  changeDescription: string;
  versionIdentifier: string;
  configuration?: JsonValue;
}

/** A metadata item of a configuration or row (`/v2/storage/.../configs/{id}/metadata`). */
export interface ConfigMetadataItem {
  id: string;
  key: string;
  value: string;
  timestamp: string;
  provider?: string;
}

/** A registered component, in Keboola's shape (kept as given, plus what gex needs). */
export interface Component {
  id: string;
  type: string;
  name: string;
  /** the whole component object as registered (description, data, configurationSchema, …) */
  definition: JsonValue;
}

export interface ComponentWithConfigurations {
  component: Component;
  configurations: Configuration[];
}

export type ListInclude = 'configuration' | 'rows' | 'state';

/** A configuration as a long listing shows it: no body, rows or state to read. */
export interface ConfigurationSummary {
  componentId: string;
  id: string;
  name: string;
  isDisabled: boolean;
  version: number;
}

/** One page of a project's live configurations (by component id, then id) and how many there are. */
export interface ConfigurationSummaries {
  total: number;
  items: ConfigurationSummary[];
}

export interface CreateConfigurationInput {
  name: string;
  configurationId?: string;
  description?: string;
  configuration?: JsonValue;
  state?: JsonValue;
  changeDescription?: string;
  isDisabled?: boolean;
}

export interface UpdateConfigurationInput {
  name?: string;
  description?: string;
  configuration?: JsonValue;
  state?: JsonValue;
  changeDescription?: string;
  isDisabled?: boolean;
  rowsSortOrder?: string[];
}

export interface CreateRowInput {
  rowId?: string;
  name?: string;
  description?: string;
  configuration?: JsonValue;
  state?: JsonValue;
  changeDescription?: string;
  isDisabled?: boolean;
}

/** A configuration with its rows and their order, created as one change (`gex configs import`). */
export interface ImportConfigurationInput {
  configuration: CreateConfigurationInput;
  rows: CreateRowInput[];
  /** [] for the natural order */
  rowsSortOrder: string[];
}

export type UpdateRowInput = Omit<CreateRowInput, 'rowId'>;

/**
 * A configuration as a whole, for replacing one (`gex configs import --replace`): its own fields,
 * its rows (given ids kept, others generated) and their order (`[]` = natural order). States are
 * replaced where given.
 */
export interface ReplaceConfigurationInput {
  configuration: Omit<CreateConfigurationInput, 'configurationId'>;
  rows: CreateRowInput[];
  rowsSortOrder: string[];
}

export interface VersionListOptions {
  /** for configuration versions ⊆ name, description, configuration; for row versions ⊆ configuration */
  include?: string[];
  limit?: number;
  offset?: number;
}

export interface CopyConfigurationInput {
  name: string;
  description?: string;
  changeDescription?: string;
}

/** What a token may do, as returned by token verification. */
export interface TokenInfo {
  id: number;
  description: string;
  projectId: number;
  projectName: string;
  readOnly: boolean;
  /** a master token: may create, list, refresh and delete the project's tokens over HTTP (never read-only) */
  canManageTokens: boolean;
  /**
   * a runner token: may also receive its project's secrets decrypted, for a run elsewhere
   * (`gex tokens create --runner`; docs/security.md#who-sees-a-secret). Read-write, never master.
   */
  runner: boolean;
  created: string;
  /** when its secret was last replaced; absent when never */
  refreshed?: string;
  /** the token that created it over HTTP; absent for tokens made with `gex tokens create` */
  creator?: TokenRef;
}
