import type { Argv } from 'yargs';
import { describedChange } from '../../store-commands/change-description.js';
import { UserError } from '../../../common/errors.js';
import { displayId } from '../../../common/log-text.js';
import type { UpdateRowInput } from '../../../store/types.js';
import { rowToWire } from '../../../store/wire/configurations.js';
import { bodyOptions, changeSummary, editedBody } from '../../input/body-change.js';
import { print, rowIdsOption, say, withStore } from '../../store-commands/store-command.js';
import { checkWrite, enforceWriteCheck, forceOption, rowLabel, rowUnit } from '../../store-commands/write-check.js';
import { withConfig } from './row-options.js';

/** `gex rows edit <config-id>` */
export function rowsEditCommand(y: Argv): Argv {
  return y.command(
    'edit <config-id>',
    'Change one row as ONE new version: its body in $EDITOR (else $VISUAL, else vi), or with --file / --set; --name, --description',
    (c) =>
      forceOption(bodyOptions(describedChange(rowIdsOption(withConfig(c), 'the row to change'))))
        .option('name', { type: 'string', describe: 'a new name' })
        .option('description', { type: 'string', describe: 'a new description' }),
    (args) =>
      withStore(args, async (store, _, opened) => {
        const [rowId, ...more] = args['row-id'] ?? [];
        if (rowId === undefined || more.length)
          throw new UserError('GEX_CLI_USAGE', 'rows edit changes one row: name it with --row-id');
        const root = await store.getConfiguration(args['component-id'], args['config-id']);
        const before = await store.getRow(args['component-id'], args['config-id'], rowId);
        const onlyMeta = args.name !== undefined || args.description !== undefined;
        const label = rowLabel(before);
        const configuration = await editedBody(
          before.configuration,
          args,
          { open: !onlyMeta, fileName: 'row.json' },
          async (body) => {
            const unit = rowUnit(label, root.configuration, body, before.configuration);
            enforceWriteCheck(
              await checkWrite({ label, body }, [unit], { opened, componentId: args['component-id'] }),
              args.force,
            );
          },
        );
        const input: UpdateRowInput = { configuration, name: args.name, description: args.description };
        const changed = changeSummary(before, input);
        const unchanged = () => say(`No change: row ${displayId(rowId)} stays at version ${before.version}.`);
        if (!changed) return args.json ? print(rowToWire(before)) : unchanged();
        input.changeDescription = args['change-description'] ?? `Row ${rowId} changed: ${changed}`;
        const after = await store.updateRow(args['component-id'], args['config-id'], rowId, input);
        if (args.json) return print(rowToWire(after));
        if (after.version === before.version) return unchanged();
        say(
          `Row ${displayId(rowId)} of configuration ${displayId(args['config-id'])} is now version ${after.version} (changed: ${changed}).`,
        );
      }),
  );
}
