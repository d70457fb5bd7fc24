import type { Argv } from 'yargs';
import { describedChange } from '../../store-commands/change-description.js';
import { displayId, displayText } from '../../../common/log-text.js';
import { rowToWire } from '../../../store/wire/configurations.js';
import { optionLikeIdNote } from '../../options/id-list.js';
import { bodyFromArgs, bodyOptions } from '../../input/body-change.js';
import { print, say, withStore } from '../../store-commands/store-command.js';
import { checkWrite, enforceWriteCheck, forceOption, rowUnit } from '../../store-commands/write-check.js';
import { withConfig } from './row-options.js';

/** `gex rows add <config-id>` */
export function rowsAddCommand(y: Argv): Argv {
  return y.command(
    'add <config-id>',
    'Add a row (its body from --file and/or --set; {} without either)',
    (c) =>
      forceOption(bodyOptions(describedChange(withConfig(c))))
        .option('row-id', { type: 'string', describe: 'its id (default: the next free number)' })
        .option('name', { type: 'string', default: '' })
        .option('description', { type: 'string', default: '' })
        .option('disabled', { type: 'boolean', default: false, describe: 'add it disabled' }),
    (args) =>
      withStore({ ...args, 'row-id': undefined }, async (store, _, opened) => {
        const configuration = (await bodyFromArgs(new Map(), args)) ?? new Map();
        const root = await store.getConfiguration(args['component-id'], args['config-id']);
        const label = args['row-id'] === undefined ? 'the new row' : `row ${displayId(args['row-id'])}`;
        const unit = rowUnit(label, root.configuration, configuration);
        enforceWriteCheck(
          await checkWrite({ label, body: configuration }, [unit], { opened, componentId: args['component-id'] }),
          args.force,
        );
        const row = await store.createRow(args['component-id'], args['config-id'], {
          rowId: args['row-id'],
          name: args.name,
          description: args.description,
          isDisabled: args.disabled,
          configuration,
          changeDescription: args['change-description'],
        });
        if (args.json) return print(rowToWire(row));
        say(
          `Added row ${displayId(row.id)} ${displayText(row.name)} to configuration ${displayId(args['config-id'])}.`,
        );
        const note = optionLikeIdNote('--row-id', row.id);
        if (note) process.stderr.write(`${note}\n`);
      }),
  );
}
