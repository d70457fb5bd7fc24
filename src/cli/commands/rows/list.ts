import type { Argv } from 'yargs';
import { printList } from '../../output/list-output.js';
import { displayId, displayText } from '../../../common/log-text.js';
import type { Row } from '../../../store/types.js';
import { rowToWire } from '../../../store/wire/configurations.js';
import { print, say, withExistingStore } from '../../store-commands/store-command.js';
import { withConfig } from './row-options.js';

function rowCells(r: Row): string[] {
  return [displayId(r.id), displayText(r.name), `version ${r.version}`, ...(r.isDisabled ? ['disabled'] : [])];
}

/** `gex rows list <config-id>` */
export function rowsListCommand(y: Argv): Argv {
  return y.command(
    'list <config-id>',
    'List the rows in the order they run',
    (c) => withConfig(c),
    (args) =>
      withExistingStore(args, async (store) => {
        const config = await store.getConfiguration(args['component-id'], args['config-id']);
        if (args.json) return print(config.rows.map((r) => rowToWire(r)));
        if (config.rows.length === 0) say(`Configuration ${displayId(config.id)} has no rows.`);
        printList(['ID', 'NAME', 'VERSION', 'DISABLED'], config.rows.map(rowCells));
      }),
  );
}
