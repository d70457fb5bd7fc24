import type { SqlParam } from '../sql/database.js';
import { column, whereEqual, type Column, type Table } from '../sql/table.js';
import type { Component, ConfigMetadataItem, ConfigurationSummary, TokenInfo } from '../types.js';
import {
  fromText,
  toText,
  type ConfigKey,
  type ConfigRecord,
  type ConfigVersionRecord,
  type MetadataRecord,
  type ProjectRecord,
  type RowRecord,
  type RowVersionRecord,
  type TokenRecord,
  type VersionOrderRange,
  type VersionStamp,
} from './records.js';

/**
 * The store's tables (see sql/migrations.ts for their DDL): each column once, with how a record's
 * value is stored, and how a stored row is read back into a record.
 */

export type DbRow = Record<string, unknown>;
export type ConfigVersionRow = ConfigKey & ConfigVersionRecord;
/** A row version as stored: held by configuration versions `heldFrom`…`heldUntil` (null: by none / up to the current one). */
export type RowVersionRow = ConfigKey & RowVersionRecord & { heldFrom: number | null; heldUntil: number | null };
export type ComponentRow = Component & { builtin: boolean };

const flag = (b: boolean): number => (b ? 1 : 0);
const bool = (v: unknown): boolean => Number(v) === 1;
const num = (v: unknown): number => Number(v);
const text = (v: unknown): string => String(v ?? '');

/** Key columns of a configuration's own record and of everything that belongs to it. */
export const CONFIG_KEY = ['project_id', 'component_id', 'id'] as const;
export const OWNED_BY_CONFIG_KEY = ['project_id', 'component_id', 'configuration_id'] as const;
/** `WHERE` text of one configuration, and of what one configuration owns (keyParams gives the values) */
export const CONFIG_WHERE = whereEqual(CONFIG_KEY);
export const OWNED_WHERE = whereEqual(OWNED_BY_CONFIG_KEY);
export const keyParams = (k: ConfigKey): SqlParam[] => [k.projectId, k.componentId, k.configId];

function keyColumns<R extends ConfigKey>(configIdColumn: 'id' | 'configuration_id'): Array<Column<R>> {
  return [
    column('project_id', (r) => r.projectId),
    column('component_id', (r) => r.componentId),
    column(configIdColumn, (r) => r.configId),
  ];
}

/** The current version's stamp, as kept on a configuration or row record. */
function currentStampColumns<R extends { current: VersionStamp }>(): Array<Column<R>> {
  return [
    column('version', (r) => r.current.version),
    column('change_description', (r) => r.current.changeDescription),
    column('version_created', (r) => r.current.created),
    column('version_token_id', (r) => r.current.token.id),
    column('version_token_description', (r) => r.current.token.description),
    column('version_identifier', (r) => r.current.versionIdentifier),
  ];
}

/** A version's own stamp, as kept on a version record. */
function versionStampColumns<R extends VersionStamp>(): Array<Column<R>> {
  return [
    column('version', (r) => r.version),
    column('created', (r) => r.created),
    column('token_id', (r) => r.token.id),
    column('token_description', (r) => r.token.description),
    column('change_description', (r) => r.changeDescription),
    column('version_identifier', (r) => r.versionIdentifier),
  ];
}

/** Name, description, body and the disabled flag: what every version of a configuration or row holds. */
function contentColumns<
  R extends { name: string; description: string; configuration: string; isDisabled: boolean },
>(): Array<Column<R>> {
  return [
    column('name', (r) => r.name),
    column('description', (r) => r.description),
    column('configuration', (r) => r.configuration),
    column('is_disabled', (r) => flag(r.isDisabled)),
  ];
}

function creatorColumns<R extends { created: string; creator: { id: number; description: string } }>(): Array<
  Column<R>
> {
  return [
    column('created', (r) => r.created),
    column('creator_token_id', (r) => r.creator.id),
    column('creator_token_description', (r) => r.creator.description),
  ];
}

/** How a configuration's `rowsSortOrder` is stored on its record. */
export const sortOrderText = (order: readonly string[]): string => JSON.stringify(order);

export const CONFIGURATIONS: Table<ConfigRecord> = {
  name: 'configurations',
  columns: [
    ...keyColumns<ConfigRecord>('id'),
    ...creatorColumns<ConfigRecord>(),
    ...contentColumns<ConfigRecord>(),
    column('is_deleted', (r) => flag(r.isDeleted)),
    column('rows_sort_order', (r) => sortOrderText(r.rowsSortOrder)),
    ...currentStampColumns<ConfigRecord>(),
    column('state', (r) => r.state),
  ],
};

export const CONFIGURATION_ROWS: Table<RowRecord> = {
  name: 'configuration_rows',
  columns: [
    ...keyColumns<RowRecord>('configuration_id'),
    column('id', (r) => r.rowId),
    ...creatorColumns<RowRecord>(),
    ...contentColumns<RowRecord>(),
    ...currentStampColumns<RowRecord>(),
    column('state', (r) => r.state),
    column('is_deleted', (r) => flag(r.isDeleted)),
  ],
};

export const CONFIGURATION_VERSIONS: Table<ConfigVersionRow> = {
  name: 'configuration_versions',
  columns: [
    ...keyColumns<ConfigVersionRow>('configuration_id'),
    ...versionStampColumns<ConfigVersionRow>(),
    ...contentColumns<ConfigVersionRow>(),
    column('is_deleted', (r) => flag(r.isDeleted)),
  ],
};

export const VERSION_ROW_ORDER: Table<VersionOrderRange> = {
  name: 'configuration_version_row_order',
  columns: [
    ...keyColumns<VersionOrderRange>('configuration_id'),
    column('row_id', (r) => r.rowId),
    column('position', (r) => r.position),
    column('first_version', (r) => r.firstVersion),
    column('last_version', (r) => r.lastVersion),
  ],
};

export const ROW_VERSIONS: Table<RowVersionRow> = {
  name: 'row_versions',
  columns: [
    ...keyColumns<RowVersionRow>('configuration_id'),
    column('row_id', (r) => r.rowId),
    ...versionStampColumns<RowVersionRow>(),
    ...contentColumns<RowVersionRow>(),
    column('held_from', (r) => r.heldFrom),
    column('held_until', (r) => r.heldUntil),
  ],
};

export const CONFIGURATION_METADATA: Table<MetadataRecord> = {
  name: 'configuration_metadata',
  columns: [
    column('id', (r) => r.id),
    ...keyColumns<MetadataRecord>('configuration_id'),
    column('meta_key', (r) => r.key),
    column('meta_value', (r) => r.value),
    column('provider', (r) => r.provider),
    column('timestamp', (r) => r.timestamp),
  ],
};

export const COMPONENTS: Table<ComponentRow> = {
  name: 'components',
  columns: [
    column('id', (r) => r.id),
    column('type', (r) => r.type),
    column('name', (r) => r.name),
    column('definition', (r) => toText(r.definition)),
    column('builtin', (r) => flag(r.builtin)),
  ],
};

export const TOKENS: Table<TokenRecord> = {
  name: 'tokens',
  columns: [
    column('id', (r) => r.id),
    column('project_id', (r) => r.projectId),
    column('description', (r) => r.description),
    column('token_hash', (r) => r.tokenHash),
    column('read_only', (r) => flag(r.readOnly)),
    column('internal', (r) => flag(r.internal)),
    column('can_manage_tokens', (r) => flag(r.canManageTokens)),
    column('runner', (r) => flag(r.runner)),
    column('created', (r) => r.created),
    column('creator_token_id', (r) => r.creator?.id ?? null),
    column('creator_token_description', (r) => r.creator?.description ?? null),
  ],
};

export const PROJECTS: Table<ProjectRecord> = {
  name: 'projects',
  columns: [column('id', (r) => r.id), column('name', (r) => r.name), column('created', (r) => r.created)],
};

// ---- reading rows back ------------------------------------------------------------------------

function stamp(r: DbRow, prefix: '' | 'version_'): VersionStamp {
  return {
    version: num(r.version),
    created: text(r[`${prefix}created`]),
    token: { id: num(r[`${prefix}token_id`]), description: text(r[`${prefix}token_description`]) },
    changeDescription: text(r.change_description),
    versionIdentifier: text(r.version_identifier),
  };
}

function content(r: DbRow): { name: string; description: string; configuration: string; isDisabled: boolean } {
  return {
    name: text(r.name),
    description: text(r.description),
    configuration: text(r.configuration),
    isDisabled: bool(r.is_disabled),
  };
}

/** A configurations row read with SUMMARY_COLUMNS. */
export function summaryFromDb(r: DbRow): ConfigurationSummary {
  return {
    componentId: text(r.component_id),
    id: text(r.id),
    name: text(r.name),
    isDisabled: bool(r.is_disabled),
    version: num(r.version),
  };
}

export function configFromDb(r: DbRow): ConfigRecord {
  return {
    projectId: num(r.project_id),
    componentId: text(r.component_id),
    configId: text(r.id),
    created: text(r.created),
    creator: { id: num(r.creator_token_id), description: text(r.creator_token_description) },
    isDeleted: bool(r.is_deleted),
    ...content(r),
    rowsSortOrder: JSON.parse(text(r.rows_sort_order)) as string[],
    current: stamp(r, 'version_'),
    state: text(r.state),
  };
}

export function rowFromDb(r: DbRow): RowRecord {
  return {
    projectId: num(r.project_id),
    componentId: text(r.component_id),
    configId: text(r.configuration_id),
    rowId: text(r.id),
    created: text(r.created),
    creator: { id: num(r.creator_token_id), description: text(r.creator_token_description) },
    ...content(r),
    current: stamp(r, 'version_'),
    state: text(r.state),
    isDeleted: bool(r.is_deleted),
  };
}

export function configVersionFromDb(r: DbRow): ConfigVersionRecord {
  return { ...stamp(r, ''), ...content(r), isDeleted: bool(r.is_deleted) };
}

export function rowVersionFromDb(r: DbRow): RowVersionRecord {
  return { ...stamp(r, ''), rowId: text(r.row_id), ...content(r) };
}

export function componentFromDb(r: DbRow): Component {
  return { id: text(r.id), type: text(r.type), name: text(r.name), definition: fromText(text(r.definition)) };
}

export function metadataFromDb(r: DbRow): ConfigMetadataItem {
  return {
    id: String(r.id),
    key: String(r.meta_key),
    value: String(r.meta_value),
    provider: String(r.provider ?? 'user'),
    timestamp: String(r.timestamp),
  };
}

/** A token joined with its project (`project_name`). */
export function tokenInfoFromDb(r: DbRow): TokenInfo {
  return {
    id: Number(r.id),
    description: String(r.description),
    projectId: Number(r.project_id),
    projectName: String(r.project_name),
    readOnly: Number(r.read_only) === 1,
    canManageTokens: Number(r.can_manage_tokens) === 1,
    runner: Number(r.runner) === 1,
    created: String(r.created),
    ...(r.refreshed === null || r.refreshed === undefined ? {} : { refreshed: String(r.refreshed) }),
    ...(r.creator_token_id === null || r.creator_token_id === undefined
      ? {}
      : { creator: { id: Number(r.creator_token_id), description: String(r.creator_token_description ?? '') } }),
  };
}
