import type { Argv } from 'yargs';
import { UserError } from '../../common/errors.js';
import { displayId } from '../../common/log-text.js';
import { configurationToWire } from '../../store/wire.js';
import { fields, print, rowIdsOption, say, storeCommandOptions, withStore } from '../store-commands/store-command.js';
import { resetState } from './state.js';

/** `gex configs delete|restore|purge|state-reset`: the trash, and starting over. */
export function configsLifecycleCommands(y: Argv): Argv {
  return y
    .command(
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
    )
    .command(
      'restore <id>',
      'Bring a configuration back from the trash, with its rows',
      (c) => storeCommandOptions(c).positional('id', { type: 'string', demandOption: true }),
      (args) =>
        withStore(args, async (store) => {
          const restored = await store.restoreConfiguration(args['component-id'], args.id);
          if (args.json) return print(configurationToWire(restored));
          say(`Configuration ${displayId(restored.id)} restored from the trash (version ${restored.version}).`);
        }),
    )
    .command(
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
    )
    .command(
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
