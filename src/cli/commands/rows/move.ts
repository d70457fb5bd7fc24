import type { Argv } from 'yargs';
import { describedChange } from '../../store-commands/change-description.js';
import { UserError } from '../../../common/errors.js';
import { displayId } from '../../../common/log-text.js';
import { fields, print, say, withStore } from '../../store-commands/store-command.js';
import { moveRow, type Placement } from './row-order.js';
import { withConfig } from './row-options.js';

/** `gex rows move <config-id> <row-id>` */
export function rowsMoveCommand(y: Argv): Argv {
  return y.command(
    'move <config-id> <row-id>',
    'Change where a row runs: --before R, --after R, --first or --last (sets rowsSortOrder)',
    (c) =>
      describedChange(withConfig(c))
        .positional('row-id', { type: 'string', demandOption: true })
        .option('before', { type: 'string', describe: 'just before this row' })
        .option('after', { type: 'string', describe: 'just after this row' })
        .option('first', { type: 'boolean', default: false })
        .option('last', { type: 'boolean', default: false }),
    (args) =>
      withStore(args, async (store) => {
        const places: Placement[] = [];
        if (args.before !== undefined) places.push({ before: args.before });
        if (args.after !== undefined) places.push({ after: args.after });
        if (args.first) places.push('first');
        if (args.last) places.push('last');
        if (places.length !== 1)
          throw new UserError(
            'GEX_CLI_USAGE',
            'rows move needs exactly one of --before ROW, --after ROW, --first, --last',
          );
        const config = await store.getConfiguration(args['component-id'], args['config-id']);
        const order = moveRow(
          config.rows.map((r) => r.id),
          args['row-id'],
          places[0],
        );
        const same =
          order.join('\u0000') === config.rows.map((r) => r.id).join('\u0000') && config.rowsSortOrder.length > 0;
        const after = same
          ? config
          : await store.updateConfiguration(args['component-id'], args['config-id'], {
              rowsSortOrder: order,
              changeDescription: args['change-description'] ?? `Row ${args['row-id']} moved`,
            });
        if (args.json)
          return print(fields({ id: after.id, version: after.version, rowsSortOrder: after.rowsSortOrder }));
        if (same)
          return say(`No change: row ${displayId(args['row-id'])} is there already (version ${config.version}).`);
        say(
          `Rows of configuration ${displayId(after.id)} now run as: ${after.rowsSortOrder.map(displayId).join(', ')} (version ${after.version}).`,
        );
      }),
  );
}
