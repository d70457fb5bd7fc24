import { displayId } from '../../common/log-text.js';
import type { JsonValue } from '../../json/index.js';
import type { StateWrite } from '../config-store.js';
import { StoreError } from '../store-error.js';
import type { Configuration, Row } from '../types.js';
import { toConfiguration, toRow } from './resources.js';
import type { ProjectSession } from './session.js';

/** States of a configuration and its rows: saved under the configuration's lock, never a new version. */

export function updateConfigurationState(
  s: ProjectSession,
  componentId: string,
  configId: string,
  state: JsonValue,
): Promise<Configuration> {
  return s.write(async (repo) => {
    const record = await s.lockLiveConfig(repo, s.key(componentId, configId));
    record.state = s.body(componentId, state, 'state', record.state);
    await repo.saveConfigState(record, record.state);
    return toConfiguration(record, await repo.loadRows(record));
  });
}

export function updateRowState(
  s: ProjectSession,
  componentId: string,
  configId: string,
  rowId: string,
  state: JsonValue,
): Promise<Row> {
  return s.write(async (repo) => {
    const key = s.key(componentId, configId);
    await s.lockLiveConfig(repo, key);
    const row = await s.liveRow(repo, key, rowId);
    row.state = s.body(componentId, state, 'state', row.state);
    await repo.saveRowState(key, rowId, row.state);
    return toRow(row);
  });
}

/**
 * All or nothing: one transaction that locks the configuration (as every write does), checks
 * every state — the row is live, the encrypted body is within 4 MB — and only then writes them.
 * Any failure, a check's or the database's mid-way, rolls every write back.
 */
export function saveStates(
  s: ProjectSession,
  componentId: string,
  configId: string,
  writes: StateWrite[],
): Promise<void> {
  const owners = writes.map((w) => w.rowId);
  if (new Set(owners).size !== owners.length) {
    return Promise.reject(
      StoreError.validation('Invalid parameters - states: each row (and the configuration) may be given once.'),
    );
  }
  return s.write(async (repo) => {
    const key = s.key(componentId, configId);
    const record = await s.lockLiveConfig(repo, key);
    const checked: Array<{ rowId: string | null; text: string }> = [];
    for (const { rowId, state } of writes) {
      if (rowId === null) {
        checked.push({ rowId, text: s.body(componentId, state, 'state', record.state) });
      } else {
        const row = await s.liveRow(repo, key, rowId);
        checked.push({ rowId, text: s.body(componentId, state, `state of row ${displayId(rowId)}`, row.state) });
      }
    }
    for (const { rowId, text } of checked) {
      if (rowId === null) await repo.saveConfigState(key, text);
      else await repo.saveRowState(key, rowId, text);
    }
  });
}
