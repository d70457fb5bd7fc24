import type { Argv } from 'yargs';
import { displayId } from '../../../common/log-text.js';
import type { UpdateConfigurationInput } from '../../../store/types.js';
import { configurationToWire } from '../../../store/wire/configurations.js';
import { bodyOptions, changeSummary, editedBody } from '../../input/body-change.js';
import { print, say, storeCommandOptions, withStore } from '../../store-commands/store-command.js';
import { checkWrite, enforceWriteCheck, forceOption, rootUnits } from '../../store-commands/write-check.js';
import { describedChange } from '../../store-commands/change-description.js';

/** `gex configs edit <id>` */
export function configsEditCommand(y: Argv): Argv {
  return y.command(
    'edit <id>',
    'Change a configuration as ONE new version: its body in $EDITOR (else $VISUAL, else vi), or with --file / --set; --name, --description',
    (c) =>
      forceOption(bodyOptions(describedChange(storeCommandOptions(c))))
        .positional('id', { type: 'string', demandOption: true })
        .option('name', { type: 'string', describe: 'a new name' })
        .option('description', { type: 'string', describe: 'a new description' }),
    (args) =>
      withStore(args, async (store, _, opened) => {
        const componentId = args['component-id'];
        const before = await store.getConfiguration(componentId, args.id);
        const onlyMeta = args.name !== undefined || args.description !== undefined;
        const label = `configuration ${displayId(before.id)}`;
        const configuration = await editedBody(
          before.configuration,
          args,
          { open: !onlyMeta, fileName: 'configuration.json' },
          async (body) => {
            const units = rootUnits(label, before.rows, body, before.configuration);
            enforceWriteCheck(await checkWrite({ label, body }, units, { opened, componentId }), args.force);
          },
        );
        const input: UpdateConfigurationInput = { configuration, name: args.name, description: args.description };
        const changed = changeSummary(before, input);
        if (!changed) {
          if (args.json) return print(configurationToWire(before));
          return say(`No change: configuration ${displayId(before.id)} stays at version ${before.version}.`);
        }
        input.changeDescription = args['change-description'] ?? `Changed ${changed}`;
        const after = await store.updateConfiguration(componentId, args.id, input);
        if (args.json) return print(configurationToWire(after));
        // a change the store finds equal (e.g. a secret re-entered as it was) makes no version
        if (after.version === before.version)
          return say(`No change: configuration ${displayId(before.id)} stays at version ${before.version}.`);
        say(`Configuration ${displayId(after.id)} is now version ${after.version} (changed: ${changed}).`);
      }),
  );
}
