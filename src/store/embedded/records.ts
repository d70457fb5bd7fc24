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
 * A configuration version's own fields. Its rows are not copied into it: each row version knows
 * the configuration versions that hold it (`held_from`…`held_until` of row_versions), and the
 * custom order is kept as ranges too (configuration_version_row_order).
 */
export interface ConfigVersionRecord extends VersionStamp {
  name: string;
  description: string;
  configuration: string;
  isDisabled: boolean;
  isDeleted: boolean;
}

/** A configuration version with its rows (in its order) and its custom order. */
export interface ConfigVersionContent extends ConfigVersionRecord {
  rowsSortOrder: string[];
  rows: HeldRowVersion[];
}

/** A row version a configuration version holds, with its row's creation time (undefined: the row's record is gone). */
export interface HeldRowVersion extends RowVersionRecord {
  rowCreated: string | undefined;
}

/**
 * Configuration versions `firstVersion`…`lastVersion` list the row at `position` of their custom
 * `rowsSortOrder` (null `lastVersion`: up to the current version; versions in the natural order
 * list none). Only the relative order of the positions open together means anything: a row
 * appended gets one past the last.
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
  /** a master token (TokenInfo.canManageTokens) */
  canManageTokens: boolean;
  /** a runner token (TokenInfo.runner) */
  runner: boolean;
  created: string;
  creator: TokenRef | null;
}

export interface ProjectRecord {
  id: number;
  name: string;
  created: string;
}
