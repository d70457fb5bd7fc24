import type { Argv } from 'yargs';
import { rowIdsOption } from '../../store-commands/store-command.js';
import { withConfig } from './row-options.js';
import { setDisabled } from './row-switch.js';

/** `gex rows disable <config-id>` */
export function rowsDisableCommand(y: Argv): Argv {
  return y.command(
    'disable <config-id>',
    'Disable rows: runs skip them unless named with --row-id',
    (c) => rowIdsOption(withConfig(c), 'the rows to disable'),
    (args) => setDisabled(true)(args),
  );
}
