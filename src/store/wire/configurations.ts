import type { JsonObject, JsonValue } from '../../json/index.js';
import type {
  ConfigMetadataItem,
  ConfigVersionDetail,
  ConfigVersionItem,
  Configuration,
  CurrentVersion,
  Row,
  RowVersion,
  TokenRef,
  VersionRow,
} from '../types.js';
import { body, bool, field, int, obj, str, type Entries } from './values.js';

/**
 * Configurations, rows, their versions and configuration metadata in the Storage API's JSON shapes,
 * in Keboola's key order: `…ToWire` builds the response body the server sends, `…FromWire` reads
 * what a server (gex or Keboola) returned.
 */

export function tokenRefToWire(t: TokenRef): JsonObject {
  return obj([
    ['id', t.id],
    ['description', t.description],
  ]);
}

export interface RowWireOptions {
  configuration?: boolean;
  state?: boolean;
}

export function rowToWire(
  row: Row | VersionRow,
  options: RowWireOptions = { configuration: true, state: true },
): JsonObject {
  return obj([
    ['id', row.id],
    ['name', row.name],
    ['description', row.description],
    ['isDisabled', row.isDisabled],
    ['configuration', options.configuration ? row.configuration : undefined],
    ['state', options.state && 'state' in row ? row.state : undefined],
    ['version', row.version],
    ['created', row.created],
    ['creatorToken', tokenRefToWire(row.creatorToken)],
    ['changeDescription', row.changeDescription],
    ['versionIdentifier', row.versionIdentifier],
  ]);
}

function currentVersionToWire(v: CurrentVersion): JsonObject {
  return obj([
    ['created', v.created],
    ['creatorToken', tokenRefToWire(v.creatorToken)],
    ['changeDescription', v.changeDescription],
    ['versionIdentifier', v.versionIdentifier],
  ]);
}

export interface ConfigurationWireOptions {
  configuration: boolean;
  rows: boolean;
  state: boolean;
}

export const FULL_CONFIGURATION: ConfigurationWireOptions = { configuration: true, rows: true, state: true };

export function configurationToWire(
  c: Configuration,
  options: ConfigurationWireOptions = FULL_CONFIGURATION,
): JsonObject {
  return obj([
    ['id', c.id],
    ['name', c.name],
    ['description', c.description],
    ['created', c.created],
    ['creatorToken', tokenRefToWire(c.creatorToken)],
    ['version', c.version],
    ['changeDescription', c.changeDescription],
    ['isDisabled', c.isDisabled],
    ['isDeleted', c.isDeleted],
    ['configuration', options.configuration ? c.configuration : undefined],
    ['rowsSortOrder', c.rowsSortOrder],
    [
      'rows',
      options.rows
        ? c.rows.map((r) => rowToWire(r, { configuration: options.configuration, state: options.state }))
        : undefined,
    ],
    ['state', options.state ? c.state : undefined],
    ['currentVersion', currentVersionToWire(c.currentVersion)],
  ]);
}

export function versionItemToWire(v: ConfigVersionItem): JsonObject {
  return obj(versionItemEntries(v));
}

function versionItemEntries(v: ConfigVersionItem): Entries {
  return [
    ['version', v.version],
    ['created', v.created],
    ['versionIdentifier', v.versionIdentifier],
    ['creatorToken', tokenRefToWire(v.creatorToken)],
    ['changeDescription', v.changeDescription],
    ['isDeleted', v.isDeleted],
    ['name', v.name],
    ['description', v.description],
    ['configuration', v.configuration],
  ];
}

/** A version item plus what a version holds besides: rows (without state) and their order. */
export function versionDetailToWire(v: ConfigVersionDetail): JsonObject {
  return obj([
    ...versionItemEntries(v),
    ['isDisabled', v.isDisabled],
    ['rowsSortOrder', v.rowsSortOrder],
    ['rows', v.rows.map((r) => rowToWire(r, { configuration: true, state: false }))],
  ]);
}

export function rowVersionToWire(v: RowVersion): JsonObject {
  return obj([
    ['version', v.version],
    ['name', v.name],
    ['description', v.description],
    ['isDisabled', v.isDisabled],
    ['created', v.created],
    ['creatorToken', tokenRefToWire(v.creatorToken)],
    ['changeDescription', v.changeDescription],
    ['versionIdentifier', v.versionIdentifier],
    ['configuration', v.configuration],
  ]);
}

export function configMetadataToWire(m: ConfigMetadataItem): JsonObject {
  return obj([
    ['id', m.id],
    ['key', m.key],
    ['value', m.value],
    ['provider', m.provider],
    ['timestamp', m.timestamp],
  ]);
}

// reading responses

export function tokenRefFromWire(v: JsonValue | undefined): TokenRef {
  return { id: Number(str(v, 'id', '0')), description: str(v, 'description') };
}

export function rowFromWire(v: JsonValue): Row {
  return {
    id: str(v, 'id'),
    name: str(v, 'name'),
    description: str(v, 'description'),
    isDisabled: bool(v, 'isDisabled'),
    configuration: body(v, 'configuration'),
    state: body(v, 'state'),
    version: int(v, 'version'),
    created: str(v, 'created'),
    creatorToken: tokenRefFromWire(field(v, 'creatorToken')),
    changeDescription: str(v, 'changeDescription'),
    versionIdentifier: str(v, 'versionIdentifier'),
  };
}

export function configurationFromWire(v: JsonValue): Configuration {
  const rows = field(v, 'rows');
  const order = field(v, 'rowsSortOrder');
  const current = field(v, 'currentVersion');
  return {
    id: str(v, 'id'),
    name: str(v, 'name'),
    description: str(v, 'description'),
    created: str(v, 'created'),
    creatorToken: tokenRefFromWire(field(v, 'creatorToken')),
    version: int(v, 'version'),
    changeDescription: str(v, 'changeDescription'),
    isDisabled: bool(v, 'isDisabled'),
    isDeleted: bool(v, 'isDeleted'),
    configuration: body(v, 'configuration'),
    rowsSortOrder: Array.isArray(order) ? order.map((x) => String(x)) : [],
    rows: Array.isArray(rows) ? rows.map(rowFromWire) : [],
    state: body(v, 'state'),
    currentVersion: {
      created: str(current, 'created'),
      creatorToken: tokenRefFromWire(field(current, 'creatorToken')),
      changeDescription: str(current, 'changeDescription'),
      versionIdentifier: str(current, 'versionIdentifier'),
    },
  };
}

export function versionItemFromWire(v: JsonValue): ConfigVersionItem {
  const item: ConfigVersionItem = {
    version: int(v, 'version'),
    created: str(v, 'created'),
    versionIdentifier: str(v, 'versionIdentifier'),
    creatorToken: tokenRefFromWire(field(v, 'creatorToken')),
    changeDescription: str(v, 'changeDescription'),
    isDeleted: bool(v, 'isDeleted'),
  };
  if (field(v, 'name') !== undefined) item.name = str(v, 'name');
  if (field(v, 'description') !== undefined) item.description = str(v, 'description');
  if (field(v, 'configuration') !== undefined) item.configuration = body(v, 'configuration');
  return item;
}

export function versionDetailFromWire(v: JsonValue): ConfigVersionDetail {
  const rows = field(v, 'rows');
  const order = field(v, 'rowsSortOrder');
  return {
    ...versionItemFromWire(v),
    name: str(v, 'name'),
    description: str(v, 'description'),
    configuration: body(v, 'configuration'),
    isDisabled: bool(v, 'isDisabled'),
    rowsSortOrder: Array.isArray(order) ? order.map((x) => String(x)) : [],
    rows: Array.isArray(rows) ? rows.map((r) => withoutState(rowFromWire(r))) : [],
  };
}

function withoutState({ state: _state, ...row }: Row): VersionRow {
  return row;
}

export function rowVersionFromWire(v: JsonValue): RowVersion {
  const item: RowVersion = {
    version: int(v, 'version'),
    name: str(v, 'name'),
    description: str(v, 'description'),
    isDisabled: bool(v, 'isDisabled'),
    created: str(v, 'created'),
    creatorToken: tokenRefFromWire(field(v, 'creatorToken')),
    changeDescription: str(v, 'changeDescription'),
    versionIdentifier: str(v, 'versionIdentifier'),
  };
  if (field(v, 'configuration') !== undefined) item.configuration = body(v, 'configuration');
  return item;
}

export function configMetadataFromWire(v: JsonValue): ConfigMetadataItem {
  const item: ConfigMetadataItem = {
    id: str(v, 'id'),
    key: str(v, 'key'),
    value: str(v, 'value'),
    timestamp: str(v, 'timestamp'),
  };
  if (field(v, 'provider') !== undefined && field(v, 'provider') !== null) item.provider = str(v, 'provider');
  return item;
}
