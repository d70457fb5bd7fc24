import { decodeJson, stringifyExact, type JsonValue } from '../../json/index.js';
import type { TokenRef } from '../types.js';

/**
 * The records the embedded store reads and writes: one per table row. Bodies (`configuration`,
 * `state`) are kept as exact JSON text, decoded only when a resource is built from them.
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

/**
 * A configuration version's own fields. Its rows and their order are not copied into it: they are
 * ranges of versions (configuration_version_rows, configuration_version_row_order) read with it.
 */
export interface ConfigVersionRecord extends VersionStamp {
  name: string;
  description: string;
  configuration: string;
  isDisabled: boolean;
  isDeleted: boolean;
}

/** A configuration version's rows and custom order, read from the version ranges. */
export interface ConfigVersionContent extends ConfigVersionRecord {
  rowsSortOrder: string[];
  /** the row versions it holds, by row id */
  rows: VersionRowRef[];
}

/** A row version a configuration version holds, with what is stored of it (undefined: missing). */
export interface VersionRowRef {
  rowId: string;
  version: number;
  content: RowVersionRecord | undefined;
  /** the row's creation time (of its record) */
  rowCreated: string | undefined;
}

/**
 * Configuration versions `firstVersion`…`lastVersion` hold version `rowVersion` of a row (null
 * `lastVersion`: up to the current version). A change of one row closes one range and opens one:
 * versions share the rows they do not change instead of each listing them all.
 */
export interface VersionRowRange extends ConfigKey {
  rowId: string;
  rowVersion: number;
  firstVersion: number;
  lastVersion: number | null;
}

/**
 * Configuration versions `firstVersion`…`lastVersion` list the row at `position` of their custom
 * `rowsSortOrder` (versions with the natural order have none). Only the relative order of the
 * positions open together means anything: a row appended gets one past the last.
 */
export interface VersionOrderRange extends ConfigKey {
  rowId: string;
  position: number;
  firstVersion: number;
  lastVersion: number | null;
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

/** A metadata item to insert (the stored one is read back as a MetadataItem). */
export interface MetadataRecord extends ConfigKey {
  id: number;
  key: string;
  value: string;
  provider: string;
  timestamp: string;
}

export interface TokenRecord {
  id: number;
  projectId: number;
  description: string;
  tokenHash: string;
  readOnly: boolean;
  /** the project's hidden token of local (CLI, runner) access: never accepted from a client */
  internal: boolean;
  created: string;
}

export interface ProjectRecord {
  id: number;
  name: string;
  created: string;
}
