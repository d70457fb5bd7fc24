import { requireAddressableId } from '../addressable-id.js';
import { CONFIGURATION_STEP, importStep, ORDER_STEP, rowStep } from '../import-step.js';
import type { Configuration, ImportConfigurationInput } from '../types.js';
import { checkCreateInput, insertingNewId, newConfiguration, validateSortOrder } from './configurations.js';
import type { RowRecord } from './records.js';
import type { Repository } from './repository.js';
import { toConfiguration } from './resources.js';
import { newRow } from './rows.js';
import type { ProjectSession } from './session.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/**
 * A configuration with its rows and their order created as one change (`gex configs import`): one
 * transaction and one configuration version — not a version per row, each holding every row so
 * far. Each row is at its first row version (the next one when the id of a trashed
 * configuration's row is reused), like a copy from a version; rows are written in bulk. Checks and
 * messages are those of creating the configuration and each row one by one.
 */
export function importConfiguration(
  s: ProjectSession,
  componentId: string,
  input: ImportConfigurationInput,
): Promise<Configuration> {
  const create = input.configuration;
  const changeDescription = create.changeDescription ?? 'Configuration created';
  return importStep(CONFIGURATION_STEP, () => {
    checkCreateInput(create);
    return insertingNewId(create.configurationId, () =>
      s.write(async (repo, now) => {
        const record = await importStep(CONFIGURATION_STEP, () => newConfiguration(s, repo, componentId, create, now));
        // rows of a reused id (deleted by now) keep their version counters; new ids must not clash with them
        const known = new Map((await repo.loadRowsIncludingDeleted(record)).map((r) => [r.rowId, r]));
        const newRowId = await rowIds(s, repo, input.rows.filter((r) => !r.rowId).length, (id) => known.has(id));
        const rows: RowRecord[] = [];
        for (const [i, rowInput] of input.rows.entries()) {
          const row = await importStep(rowStep(i, rowInput.rowId), async () => {
            if (rowInput.rowId)
              requireAddressableId(rowInput.rowId, 'rowId', KEBOOLA_ERRORS.componentsRowsValidation.code);
            const rowId = rowInput.rowId || (await newRowId());
            const created = newRow(s, record, rowId, rowInput, now, known.get(rowId));
            s.nextRowVersion(created, now, changeDescription);
            return created;
          });
          known.set(row.rowId, row);
          rows.push(row);
        }
        if (input.rowsSortOrder.length > 0)
          record.rowsSortOrder = await importStep(ORDER_STEP, () => validateSortOrder(input.rowsSortOrder, rows));
        await s.commitVersion(repo, record, now, changeDescription, { replaceAll: true, entered: rows });
        return toConfiguration(record, rows);
      }),
    );
  });
}

/**
 * Draws generated row ids as creating the rows one by one would — the row counter's next values,
 * skipping ids taken — with the `count` needed reserved in one statement instead of one each.
 */
async function rowIds(
  s: ProjectSession,
  repo: Repository,
  count: number,
  taken: (id: string) => boolean,
): Promise<() => Promise<string>> {
  let next = count > 0 ? await repo.reserveSequence('row', count) : 0;
  const end = next + count;
  return async () => {
    while (next < end) {
      const id = String(next++);
      if (!taken(id)) return id;
    }
    return s.newId(repo, 'row', async (id) => taken(id));
  };
}
