import type { Argv } from 'yargs';
import { displayId } from '../../../common/log-text.js';
import { configurationToWire } from '../../../store/wire/configurations.js';
import { print, say, storeCommandOptions, withStore } from '../../store-commands/store-command.js';

/** `gex configs restore <id>`: back from the trash */
export function configsRestoreCommand(y: Argv): Argv {
  return y.command(
    'restore <id>',
    'Bring a configuration back from the trash, with its rows',
    (c) => storeCommandOptions(c).positional('id', { type: 'string', demandOption: true }),
    (args) =>
      withStore(args, async (store) => {
        const restored = await store.restoreConfiguration(args['component-id'], args.id);
        if (args.json) return print(configurationToWire(restored));
        say(`Configuration ${displayId(restored.id)} restored from the trash (version ${restored.version}).`);
      }),
  );
}
