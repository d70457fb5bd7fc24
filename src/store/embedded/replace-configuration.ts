import { requireAddressableId } from '../addressable-id.js';
import { excerptQuoted } from '../../common/log-text.js';
import { StoreError } from '../store-error.js';
import type { Configuration, ReplaceConfigurationInput } from '../types.js';
import { validateSortOrder } from './configurations.js';
import type { RowRecord } from './records.js';
import { toConfiguration } from './resources.js';
import type { ProjectSession, RowContent } from './session.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/**
 * Replace: a live configuration becomes the one given — name, description, body, isDisabled, its
 * rows (rows not given are deleted, given ones created or changed) and their order — as ONE new
 * configuration version, in one transaction under the configuration's lock. States are replaced
 * where given and kept otherwise. A replacement equal to what is stored makes no version. Only the
 * embedded store can do this: a Storage API changes one row per call, each a version of its own.
 */
export async function replaceConfiguration(
  s: ProjectSession,
  componentId: string,
  configId: string,
  input: ReplaceConfigurationInput,
): Promise<Configuration> {
  const wanted = input.configuration;
  if (typeof wanted.name !== 'string') throw StoreError.validation('Invalid parameters - name: This field is missing.');
  const given = new Set<string>();
  for (const row of input.rows) {
    if (!row.rowId) continue;
    requireAddressableId(row.rowId, 'rowId', KEBOOLA_ERRORS.componentsRowsValidation.code);
    if (given.has(row.rowId))
      throw StoreError.validation(
        `Invalid parameters - rows: the row id ${excerptQuoted(row.rowId)} is given twice.`,
        KEBOOLA_ERRORS.configurationRowAlreadyExists.code,
      );
    given.add(row.rowId);
  }
  return s.write(async (repo, now) => {
    const key = s.key(componentId, configId);
    const record = await s.lockLiveConfig(repo, key);
    const changeDescription = wanted.changeDescription ?? 'Replaced by an import';
    const all = new Map((await repo.loadRowsIncludingDeleted(key)).map((r) => [r.rowId, r]));
    const left: string[] = [];
    for (const row of all.values()) {
      if (row.isDeleted || given.has(row.rowId)) continue;
      // the row keeps its state and version counter for a later rollback or re-creation
      await repo.saveRow({ ...row, isDeleted: true });
      left.push(row.rowId);
    }
    const live: RowRecord[] = [];
    const entered: RowRecord[] = [];
    for (const row of input.rows) {
      const rowId =
        row.rowId ||
        (await s.newId(
          repo,
          'row',
          async (id) => given.has(id) || all.has(id) || Boolean(await repo.loadRow(key, id)),
        ));
      const existing = all.get(rowId);
      const current = existing && !existing.isDeleted ? existing : undefined;
      const content: RowContent = {
        name: row.name ?? '',
        description: row.description ?? '',
        configuration: s.body(componentId, row.configuration ?? new Map(), 'configuration', current?.configuration),
        isDisabled: row.isDisabled ?? false,
      };
      const state =
        row.state === undefined ? (current?.state ?? '{}') : s.body(componentId, row.state, 'state', current?.state);
      if (current && sameContent(current, content)) {
        if (state !== current.state) await repo.saveRowState(key, rowId, state);
        live.push({ ...current, state });
        continue;
      }
      // a live row keeps when and by whom it was created; a deleted one's version counter continues
      const next = current
        ? { ...current, ...content, state }
        : s.newRowRecord(key, rowId, content, now, { current: existing?.current, state });
      s.nextRowVersion(next, now, changeDescription);
      live.push(next);
      entered.push(next);
    }
    const next = {
      ...record,
      name: wanted.name,
      description: wanted.description ?? '',
      isDisabled: wanted.isDisabled ?? false,
      configuration: s.configurationBody(record, wanted.configuration ?? new Map(), record.configuration),
      rowsSortOrder: validateSortOrder(input.rowsSortOrder, live),
      state: wanted.state === undefined ? record.state : s.body(componentId, wanted.state, 'state', record.state),
    };
    const changed =
      left.length > 0 ||
      entered.length > 0 ||
      !sameContent(record, next) ||
      JSON.stringify(next.rowsSortOrder) !== JSON.stringify(record.rowsSortOrder);
    if (changed) await s.commitVersion(repo, next, now, changeDescription, { entered, left });
    else if (next.state !== record.state) await repo.saveConfigState(next, next.state);
    return toConfiguration(next, live);
  });
}

function sameContent(a: RowContent, b: RowContent): boolean {
  return (
    a.name === b.name &&
    a.description === b.description &&
    a.configuration === b.configuration &&
    a.isDisabled === b.isDisabled
  );
}
