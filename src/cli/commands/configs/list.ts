import type { Argv } from 'yargs';
import { displayId, displayText } from '../../../common/log-text.js';
import { configurationToWire } from '../../../store/wire/configurations.js';
import { print, say, storeCommandOptions, withExistingStore } from '../../store-commands/store-command.js';
import { printList } from '../../output/list-output.js';

/** `gex configs list` */
export function configsListCommand(y: Argv): Argv {
  return y.command(
    'list',
    'List the configurations of a component',
    (c) =>
      storeCommandOptions(c).option('deleted', {
        type: 'boolean',
        default: false,
        describe: 'list the trash instead',
      }),
    (args) =>
      withExistingStore(args, async (store) => {
        const configs = await store.listConfigurations(args['component-id'], { isDeleted: args.deleted });
        if (args.json) return print(configs.map((c) => configurationToWire(c)));
        if (configs.length === 0)
          say(`No ${args.deleted ? 'deleted ' : ''}configurations of ${displayId(args['component-id'])}.`);
        // ids and names are the store's text: one of them must not be able to add a line or a column
        printList(
          ['ID', 'NAME', 'VERSION'],
          configs.map((c) => {
            const rows = c.rows.length
              ? `, ${c.rows.length} rows (${c.rows.filter((r) => r.isDisabled).length} disabled)`
              : '';
            return [
              displayId(c.id),
              displayText(c.name),
              `version ${c.version}${rows}${c.isDisabled ? ', disabled' : ''}`,
            ];
          }),
        );
      }),
  );
}
