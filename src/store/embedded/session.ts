import type { JsonValue } from '../../json/index.js';
import { cipherScope, type SecretCipher } from '../encryption.js';
import { newVersionIdentifier, timestamp } from '../identifiers.js';
import type { Database } from '../sql/database.js';
import { StoreError } from '../store-error.js';
import type { Component, TokenInfo, TokenRef } from '../types.js';
import {
  fromText,
  toText,
  type ConfigKey,
  type ConfigRecord,
  type RowRecord,
  type RowVersionRecord,
  type VersionStamp,
} from './records.js';
import { Repository } from './repository.js';
import { sortOrderText } from './tables.js';
import { orderChange } from './version-ranges.js';
import { checkComponentConfiguration } from '../component-rules.js';

/** Largest `configuration` or `state` body accepted (Keboola's limit). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** What every version of a row holds. */
export interface RowContent {
  name: string;
  description: string;
  /** exact JSON text */
  configuration: string;
  isDisabled: boolean;
}

/** What every version of a configuration holds besides its rows. */
export interface ConfigContent extends RowContent {
  rowsSortOrder: string[];
}

/** How the rows of a new configuration version differ from the previous version's. */
export interface RowsChange {
  /** rows with a new row version (`nextRowVersion`), held from this version on: created, changed, restored; saved with it */
  entered?: readonly RowRecord[];
  /** ids of rows this version no longer holds */
  left?: readonly string[];
  /** this version holds none of the previous version's rows, only `entered` (rollback, re-creation) */
  replaceAll?: boolean;
}

const keyOf = (k: ConfigKey): ConfigKey => ({
  projectId: k.projectId,
  componentId: k.componentId,
  configId: k.configId,
});

/** What a new record keeps of an earlier one of the same id; by default it starts afresh. */
export interface Carried {
  created?: string;
  creator?: TokenRef;
  current?: VersionStamp;
  state?: string;
}

/**
 * One token's access to its project's configurations: the transactions, the checks and the
 * version bookkeeping that every operation (configurations, rows, versions, states, metadata)
 * shares. Each operation is one transaction; a change locks the configuration's record first, so
 * concurrent writers get consecutive versions and nothing is lost — within one process and, on
 * PostgreSQL (SELECT … FOR UPDATE), across every process sharing the database. Writers of one
 * configuration queue on its record instead of failing and retrying: no 409s for clients to handle.
 */
export class ProjectSession {
  readonly token: TokenRef;

  constructor(
    private readonly db: Database,
    private readonly cipher: SecretCipher,
    readonly info: TokenInfo,
  ) {
    this.token = { id: info.id, description: info.description };
  }

  /** A read in one consistent snapshot (a configuration and its rows from the same moment). */
  read<T>(work: (repo: Repository) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => work(new Repository(tx, this.db.dialect)), { readOnly: true });
  }

  /**
   * A change, in one transaction; `work` locks the configuration it changes first
   * (`lockLiveConfig`). `denied` is the 403 message a read-only token gets (Keboola words a few
   * refusals differently).
   */
  write<T>(work: (repo: Repository, now: string) => Promise<T>, denied?: string): Promise<T> {
    if (this.info.readOnly) return Promise.reject(StoreError.accessDenied(denied));
    const now = timestamp();
    return this.db.transaction((tx) => work(new Repository(tx, this.db.dialect), now));
  }

  key(componentId: string, configId: string): ConfigKey {
    return { projectId: this.info.projectId, componentId, configId };
  }

  async requireComponent(repo: Repository, componentId: string): Promise<Component> {
    const component = await repo.loadComponent(componentId);
    if (!component) {
      throw StoreError.notFound(`Component ${componentId} not found. Register it with "gex components import" first.`);
    }
    return component;
  }

  /** The live (not trashed) configuration, for reading. */
  liveConfig(repo: Repository, key: ConfigKey): Promise<ConfigRecord> {
    return this.requireLive(repo, key, () => repo.loadConfig(key));
  }

  /** The live configuration, locked for this transaction's change. */
  lockLiveConfig(repo: Repository, key: ConfigKey): Promise<ConfigRecord> {
    return this.requireLive(repo, key, () => repo.loadConfigForUpdate(key));
  }

  private async requireLive(
    repo: Repository,
    key: ConfigKey,
    load: () => Promise<ConfigRecord | undefined>,
  ): Promise<ConfigRecord> {
    // existence only: decoding the component's definition would be most of a detail request's work
    if (!(await repo.componentExists(key.componentId))) await this.requireComponent(repo, key.componentId);
    const record = await load();
    if (!record || record.isDeleted) throw StoreError.notFound(`Configuration ${key.configId} not found`);
    return record;
  }

  async liveRow(repo: Repository, key: ConfigKey, rowId: string): Promise<RowRecord> {
    const row = await repo.loadRow(key, rowId);
    if (!row || row.isDeleted) throw StoreError.notFound(`Row ${rowId} not found`);
    return row;
  }

  async rowVersionOrFail(repo: Repository, key: ConfigKey, rowId: string, version: number): Promise<RowVersionRecord> {
    const v = await repo.loadRowVersion(key, rowId, version);
    if (!v) throw StoreError.notFound(`Version ${version} of row ${rowId} not found`);
    return v;
  }

  stamp(version: number, now: string, changeDescription: string): VersionStamp {
    return { version, created: now, token: this.token, changeDescription, versionIdentifier: newVersionIdentifier() };
  }

  /** Encrypts `#` values and checks the size; returns the exact JSON text to store. */
  /** A configuration's body as stored, once it meets its component's rules (a flow's phases and tasks). */
  configurationBody(key: { componentId: string; configId: string }, value: JsonValue, previous?: string): string {
    checkComponentConfiguration(key.componentId, key.configId, value);
    return this.body(key.componentId, value, 'configuration', previous);
  }

  body(componentId: string, value: JsonValue, field: string, previous?: string): string {
    const encrypted = this.cipher.encryptTree(
      value,
      cipherScope(this.info.projectId, componentId),
      previous === undefined ? undefined : fromText(previous),
    );
    const json = toText(encrypted);
    if (Buffer.byteLength(json) > MAX_BODY_BYTES) {
      throw StoreError.validation(`Invalid parameters - ${field}: the value is larger than 4 MB.`);
    }
    return json;
  }

  /** A live configuration record (not yet saved): created now by this token unless `carried` says otherwise. */
  newConfigRecord(key: ConfigKey, content: ConfigContent, now: string, carried: Carried = {}): ConfigRecord {
    return {
      projectId: key.projectId,
      componentId: key.componentId,
      configId: key.configId,
      created: carried.created ?? now,
      creator: carried.creator ?? this.token,
      isDeleted: false,
      name: content.name,
      description: content.description,
      configuration: content.configuration,
      isDisabled: content.isDisabled,
      rowsSortOrder: content.rowsSortOrder,
      current: carried.current ?? this.stamp(0, now, ''),
      state: carried.state ?? '{}',
    };
  }

  /** A live row record (not yet saved): created now by this token unless `carried` says otherwise. */
  newRowRecord(key: ConfigKey, rowId: string, content: RowContent, now: string, carried: Carried = {}): RowRecord {
    return {
      projectId: key.projectId,
      componentId: key.componentId,
      configId: key.configId,
      rowId,
      created: carried.created ?? now,
      creator: carried.creator ?? this.token,
      name: content.name,
      description: content.description,
      configuration: content.configuration,
      isDisabled: content.isDisabled,
      current: carried.current ?? this.stamp(0, now, ''),
      state: carried.state ?? '{}',
      isDeleted: false,
    };
  }

  /**
   * Appends a configuration version for the current record and saves the record, with the rows
   * `change` names. A version does not copy its rows: each row version records the configuration
   * versions that hold it, so the previous version's rows carry over untouched and a change of one
   * row writes one row's worth, however many rows the configuration has. The custom row order
   * carries over the same way.
   */
  async commitVersion(
    repo: Repository,
    record: ConfigRecord,
    now: string,
    changeDescription: string,
    change: RowsChange = {},
  ): Promise<void> {
    const previous = record.current.version;
    record.current = this.stamp(previous + 1, now, changeDescription);
    const version = record.current.version;
    const entered = change.entered ?? [];
    if (change.replaceAll) await repo.holdings.closeHeldRowVersions(record, previous, 'all');
    else if (previous > 0)
      await repo.holdings.closeHeldRowVersions(record, previous, [
        ...(change.left ?? []),
        ...entered.map((r) => r.rowId),
      ]);
    await repo.saveRowsWithVersions(entered, version);
    await this.commitOrder(repo, record, version);
    await repo.insertConfigVersion(record, {
      ...record.current,
      name: record.name,
      description: record.description,
      configuration: record.configuration,
      isDisabled: record.isDisabled,
      isDeleted: record.isDeleted,
    });
    await repo.saveConfig(record);
  }

  /**
   * Carries the custom row order into `version`: only what changed since the previous version is
   * written. The previous order is the record's as stored, which the current version's open
   * order ranges always equal.
   */
  private async commitOrder(repo: Repository, record: ConfigRecord, version: number): Promise<void> {
    const stored = await repo.holdings.storedSortOrderText(record);
    // the common case, an unchanged order, without decoding it (as the record's column stores it)
    if (stored === sortOrderText(record.rowsSortOrder)) return;
    const change = orderChange(stored === undefined ? [] : (JSON.parse(stored) as string[]), record.rowsSortOrder);
    if (change.kind === 'same') return;
    const at = (rowId: string, position: number) => ({
      ...keyOf(record),
      rowId,
      position,
      firstVersion: version,
      lastVersion: null,
    });
    if (change.kind === 'reset') {
      await repo.holdings.closeOrderRanges(record, version - 1, 'all');
      await repo.holdings.openOrderRanges(change.order.map((id, i) => at(id, i)));
    } else {
      const last = await repo.holdings.lastOrderPosition(record);
      await repo.holdings.closeOrderRanges(record, version - 1, change.removed);
      await repo.holdings.openOrderRanges(change.appended.map((id, i) => at(id, last + 1 + i)));
    }
  }

  /** Gives a row its next row version (saved by `commitVersion`, whose `entered` it must be in). */
  nextRowVersion(row: RowRecord, now: string, changeDescription: string): void {
    row.current = this.stamp(row.current.version + 1, now, changeDescription);
  }

  /** A fresh id from the counter, skipping ids already taken (e.g. given explicitly). */
  async newId(
    repo: Repository,
    sequence: 'configuration' | 'row',
    exists: (id: string) => Promise<boolean>,
  ): Promise<string> {
    for (;;) {
      const id = String(await repo.nextSequence(sequence));
      if (!(await exists(id))) return id;
    }
  }
}
