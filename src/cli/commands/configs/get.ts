import type { Argv } from 'yargs';
import { configurationToWire, versionDetailToWire } from '../../../store/wire/configurations.js';
import { print, storeCommandOptions, withExistingStore } from '../../store-commands/store-command.js';
import { integerOption } from '../../options/option-checks.js';

/** `gex configs get <id>` */
export function configsGetCommand(y: Argv): Argv {
  return y.command(
    'get <id>',
    'Show a configuration with its rows and state, or one of its versions (JSON; secrets as stored, encrypted)',
    (c) =>
      storeCommandOptions(c)
        .positional('id', { type: 'string', demandOption: true })
        .option(
          'version',
          integerOption('version', {
            min: 1,
            max: Number.MAX_SAFE_INTEGER,
            describe: 'this version (gex configs versions ID) instead of the current configuration',
          }),
        ),
    (args) =>
      withExistingStore(args, async (store) => {
        if (args.version === undefined)
          return print(configurationToWire(await store.getConfiguration(args['component-id'], args.id)));
        print(versionDetailToWire(await store.getConfigurationVersion(args['component-id'], args.id, args.version)));
      }),
  );
}
