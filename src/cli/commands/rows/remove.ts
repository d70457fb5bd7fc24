import type { Argv } from 'yargs';
import { describedChange } from '../../store-commands/change-description.js';
import { displayId } from '../../../common/log-text.js';
import { fields, print, rowIdsOption, say, withStore } from '../../store-commands/store-command.js';
import { withConfig, namedRows } from './row-options.js';

/** `gex rows remove <config-id>` */
export function rowsRemoveCommand(y: Argv): Argv {
  return y.command(
    'remove <config-id>',
    'Remove rows from a configuration (one new configuration version per row)',
    (c) => describedChange(rowIdsOption(withConfig(c), 'the rows to remove')),
    (args) =>
      withStore(args, async (store) => {
        const removed = await namedRows(store, args['component-id'], args['config-id'], args['row-id']);
        for (const rowId of removed)
          await store.deleteRow(args['component-id'], args['config-id'], rowId, args['change-description']);
        if (args.json) return print(fields({ id: args['config-id'], removedRowIds: removed }));
        say(
          `Removed row${removed.length > 1 ? 's' : ''} ${removed.map(displayId).join(', ')} from configuration ${displayId(args['config-id'])}.`,
        );
      }),
  );
}
