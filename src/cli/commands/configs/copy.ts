import type { Argv } from 'yargs';
import { displayId, quoteForLog } from '../../../common/log-text.js';
import { configurationToWire } from '../../../store/wire/configurations.js';
import { positiveInt, print, say, storeCommandOptions, withStore } from '../../store-commands/store-command.js';
import { describedChange } from '../../store-commands/change-description.js';

/** `gex configs copy <id> <target>` */
export function configsCopyCommand(y: Argv): Argv {
  return y.command(
    'copy <id> <target>',
    'Create a new configuration from a version',
    (c) =>
      describedChange(storeCommandOptions(c))
        .positional('id', { type: 'string', demandOption: true })
        .positional('target', { type: 'string', demandOption: true, describe: 'version number' })
        .option('name', { type: 'string', demandOption: true, describe: 'name of the new configuration' })
        .option('description', { type: 'string' }),
    (args) =>
      withStore(args, async (store) => {
        const version = positiveInt(args.target, 'version');
        const copy = await store.copyConfiguration(args['component-id'], args.id, version, {
          name: args.name,
          description: args.description,
          changeDescription: args['change-description'],
        });
        if (args.json) return print(configurationToWire(copy));
        say(
          `Created configuration ${displayId(copy.id)} ${quoteForLog(copy.name)} from version ${version} of ${displayId(args.id)}.`,
        );
      }),
  );
}
