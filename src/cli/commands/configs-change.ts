import type { Argv } from 'yargs';
import { displayId, quoteForLog } from '../../common/log-text.js';
import type { UpdateConfigurationInput } from '../../store/types.js';
import { configurationToWire } from '../../store/wire.js';
import { optionLikeIdNote } from '../options/id-list.js';
import { bodyFromArgs, bodyOptions, changeSummary, editedBody } from '../input/body-change.js';
import { fields, positiveInt, print, say, storeCommandOptions, withStore } from '../store-commands/store-command.js';
import { checkWrite, enforceWriteCheck, forceOption, rootUnits } from '../store-commands/write-check.js';

const describedChange = <T>(y: Argv<T>) =>
  y.option('change-description', { type: 'string', describe: 'the description of the new version' }) as Argv<
    T & { 'change-description'?: string }
  >;

/** `gex configs create|edit|rollback|copy`: changes that make a configuration or a version of one (import: configs-import.ts). */
export function configsChangeCommands(y: Argv): Argv {
  return y
    .command(
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
    )
    .command(
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
    )
    .command(
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
    )
    .command(
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
