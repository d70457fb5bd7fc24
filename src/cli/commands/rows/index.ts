import type { Argv } from 'yargs';
import { withSubCommands } from '../sub-commands.js';
import { rowsAddCommand } from './add.js';
import { rowsDisableCommand } from './disable.js';
import { rowsEditCommand } from './edit.js';
import { rowsEnableCommand } from './enable.js';
import { rowsListCommand } from './list.js';
import { rowsMoveCommand } from './move.js';
import { rowsRemoveCommand } from './remove.js';

/** `gex rows …`: the rows of a stored configuration, in any store. */
export function rowsCommand(yargs: Argv): Argv {
  return yargs.command('rows <action>', 'List and change the rows of a stored configuration', (y) =>
    withSubCommands(y, [
      rowsListCommand,
      rowsAddCommand,
      rowsEditCommand,
      rowsRemoveCommand,
      rowsEnableCommand,
      rowsDisableCommand,
      rowsMoveCommand,
    ]).demandCommand(1),
  );
}
