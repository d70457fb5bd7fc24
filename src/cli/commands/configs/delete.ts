import type { Argv } from 'yargs';
import { displayId } from '../../../common/log-text.js';
import { fields, print, say, storeCommandOptions, withStore } from '../../store-commands/store-command.js';

/** `gex configs delete <id>`: into the trash */
export function configsDeleteCommand(y: Argv): Argv {
  return y.command(
    'delete <id>',
    'Move a configuration to the trash (restore brings it back; purge removes it for good)',
    (c) => storeCommandOptions(c).positional('id', { type: 'string', demandOption: true }),
    (args) =>
      withStore(args, async (store) => {
        // a second delete would purge: only a live configuration is deleted here
        await store.getConfiguration(args['component-id'], args.id);
        await store.deleteConfiguration(args['component-id'], args.id);
        if (args.json) return print(fields({ id: args.id, isDeleted: true }));
        say(
          `Configuration ${displayId(args.id)} moved to the trash ("gex configs restore ${displayId(args.id)}" brings it back).`,
        );
      }),
  );
}
