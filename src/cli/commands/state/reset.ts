import type { Argv } from 'yargs';
import { UserError } from '../../../common/errors.js';
import { displayId } from '../../../common/log-text.js';
import type { ConfigStore } from '../../../store/config-store.js';
import {
  fields,
  print,
  rowIdsOption,
  say,
  storeCommandOptions,
  withStore,
} from '../../store-commands/store-command.js';

/** Resets the state of a configuration, or of each row named, to `{}`. */
export async function resetState(
  store: ConfigStore,
  componentId: string,
  configId: string,
  rowIds: string[],
  json: boolean,
): Promise<void> {
  const empty = new Map();
  rowIds = [...new Set(rowIds)];
  if (rowIds.length === 0) await store.updateConfigurationState(componentId, configId, empty);
  else {
    // an unknown row is named here; then the states are saved as one change (all or none, see saveStates)
    const rows = new Set((await store.listRows(componentId, configId)).map((r) => r.id));
    const unknown = rowIds.filter((id) => !rows.has(id));
    if (unknown.length)
      throw new UserError(
        'GEX_ROW_NOT_FOUND',
        `Configuration ${displayId(configId)} has no row ${unknown.map(displayId).join(', ')}: nothing was reset`,
      );
    await store.saveStates(
      componentId,
      configId,
      rowIds.map((rowId) => ({ rowId, state: empty })),
    );
  }
  if (json) return print(fields({ id: configId, rowIds: rowIds, state: empty }));
  const what = rowIds.length ? `row${rowIds.length > 1 ? 's' : ''} ${rowIds.map(displayId).join(', ')} of ` : '';
  say(`State of ${what}configuration ${displayId(configId)} reset to {}.`);
}

/** `gex state reset <config-id>` */
export function stateResetCommand(y: Argv): Argv {
  return y.command(
    'reset <config-id>',
    'Reset the state of a configuration (or of rows) to {}: the next run starts from scratch',
    (c) =>
      rowIdsOption(
        storeCommandOptions(c).positional('config-id', { type: 'string', demandOption: true }),
        'reset these rows only',
      ),
    (args) =>
      withStore(args, (store) =>
        resetState(store, args['component-id'], args['config-id'], args['row-id'] ?? [], args.json),
      ),
  );
}
