import type { Argv } from 'yargs';
import { rowIdsOption } from '../../store-commands/store-command.js';
import { withConfig } from './row-options.js';
import { setDisabled } from './row-switch.js';

/** `gex rows enable <config-id>` */
export function rowsEnableCommand(y: Argv): Argv {
  return y.command(
    'enable <config-id>',
    'Enable rows: they run again',
    (c) => rowIdsOption(withConfig(c), 'the rows to enable'),
    (args) => setDisabled(false)(args),
  );
}
