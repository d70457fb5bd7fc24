import type { Argv } from 'yargs';
import { displayId, quoteForLog } from '../../../common/log-text.js';
import { configurationToWire } from '../../../store/wire/configurations.js';
import { optionLikeIdNote } from '../../options/id-list.js';
import { bodyFromArgs, bodyOptions } from '../../input/body-change.js';
import { print, say, storeCommandOptions, withStore } from '../../store-commands/store-command.js';
import { checkWrite, enforceWriteCheck, forceOption, rootUnits } from '../../store-commands/write-check.js';
import { describedChange } from '../../store-commands/change-description.js';

/** `gex configs create` */
export function configsCreateCommand(y: Argv): Argv {
  return y.command(
    'create',
    'Create a configuration (its body from --file and/or --set; {} without either)',
    (c) =>
      forceOption(bodyOptions(describedChange(storeCommandOptions(c))))
        .option('name', { type: 'string', demandOption: true, describe: 'its name' })
        .option('description', { type: 'string', default: '' })
        .option('config-id', { type: 'string', describe: 'its id (default: the next free number)' }),
    (args) =>
      withStore(args, async (store, _, opened) => {
        const configuration = (await bodyFromArgs(new Map(), args)) ?? new Map();
        const label =
          args['config-id'] === undefined ? 'the new configuration' : `configuration ${displayId(args['config-id'])}`;
        enforceWriteCheck(
          await checkWrite({ label, body: configuration }, rootUnits(label, [], configuration), {
            opened,
            componentId: args['component-id'],
          }),
          args.force,
        );
        const created = await store.createConfiguration(args['component-id'], {
          name: args.name,
          description: args.description,
          configurationId: args['config-id'],
          configuration,
          changeDescription: args['change-description'] ?? 'Configuration created',
        });
        if (args.json) return print(configurationToWire(created));
        say(
          `Created configuration ${displayId(created.id)} ${quoteForLog(created.name)} of ${displayId(args['component-id'])} (version ${created.version}).`,
        );
        const note = optionLikeIdNote('--config-id', created.id);
        if (note) process.stderr.write(`${note}\n`);
      }),
  );
}
