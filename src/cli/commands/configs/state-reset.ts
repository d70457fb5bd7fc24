import type { Argv } from 'yargs';
import { rowIdsOption, storeCommandOptions, withStore } from '../../store-commands/store-command.js';
import { resetState } from '../state/reset.js';

/** `gex configs state-reset <id>`: starting over */
export function configsStateResetCommand(y: Argv): Argv {
  return y.command(
    'state-reset <id>',
    'Reset the state of a configuration (or of rows) to {}: the next run starts from scratch (same as "gex state reset")',
    (c) =>
      rowIdsOption(
        storeCommandOptions(c).positional('id', { type: 'string', demandOption: true }),
        'reset these rows only',
      ),
    (args) =>
      withStore(args, (store) => resetState(store, args['component-id'], args.id, args['row-id'] ?? [], args.json)),
  );
}
