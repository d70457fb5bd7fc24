import type { Argv } from 'yargs';
import { displayId } from '../../../common/log-text.js';
import { fields, positiveInt, print, say, storeCommandOptions, withStore } from '../../store-commands/store-command.js';
import { describedChange } from '../../store-commands/change-description.js';

/** `gex configs rollback <id> <target>` */
export function configsRollbackCommand(y: Argv): Argv {
  return y.command(
    'rollback <id> <target>',
    'Make a version the current one again (as a new version)',
    (c) =>
      describedChange(storeCommandOptions(c))
        .positional('id', { type: 'string', demandOption: true })
        .positional('target', { type: 'string', demandOption: true, describe: 'version number' }),
    (args) =>
      withStore(args, async (store) => {
        const version = positiveInt(args.target, 'version');
        const result = await store.rollbackConfiguration(
          args['component-id'],
          args.id,
          version,
          args['change-description'],
        );
        if (args.json) return print(fields({ id: args.id, version: result.version }));
        say(`Configuration ${displayId(args.id)} rolled back to version ${version}: now version ${result.version}.`);
      }),
  );
}
