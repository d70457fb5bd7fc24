import type { Argv } from 'yargs';
import { UserError } from '../../../common/errors.js';
import { displayId } from '../../../common/log-text.js';
import { fields, print, say, storeCommandOptions, withStore } from '../../store-commands/store-command.js';

/** `gex configs purge <id>`: out of the trash for good */
export function configsPurgeCommand(y: Argv): Argv {
  return y.command(
    'purge <id>',
    'Remove a configuration in the trash for good, with its versions (asks nothing: needs --yes)',
    (c) =>
      storeCommandOptions(c)
        .positional('id', { type: 'string', demandOption: true })
        .option('yes', { type: 'boolean', default: false, describe: 'yes, remove it permanently' }),
    (args) =>
      withStore(args, async (store) => {
        const componentId = args['component-id'];
        const trashed = (await store.listConfigurations(componentId, { isDeleted: true })).some(
          (c) => c.id === args.id,
        );
        if (!trashed) {
          const live = (await store.listConfigurations(componentId)).some((c) => c.id === args.id);
          throw new UserError(
            'GEX_CONFIG_NOT_FOUND',
            live
              ? `Configuration ${displayId(args.id)} is not in the trash: only a deleted configuration can be purged ("gex configs delete ${displayId(args.id)}" first)`
              : `Configuration ${displayId(args.id)} of ${displayId(componentId)} is not in the trash (nor live): nothing to purge`,
          );
        }
        if (!args.yes)
          throw new UserError(
            'GEX_CLI_USAGE',
            `Purging removes configuration ${displayId(args.id)} and all its versions permanently: add --yes to do it`,
          );
        await store.deleteConfiguration(componentId, args.id);
        if (args.json) return print(fields({ id: args.id, purged: true }));
        say(`Configuration ${displayId(args.id)} purged: it is gone for good.`);
      }),
  );
}
