import type { Argv } from 'yargs';
import { withSubCommands } from '../sub-commands.js';
import { stateResetCommand } from './reset.js';
import { stateShowCommand } from './show.js';

/** `gex state show|reset`: the state a run starts from. */
export function stateCommand(yargs: Argv): Argv {
  return yargs.command('state <action>', 'Show or reset the state of stored configurations and rows', (y) =>
    withSubCommands(y, [stateShowCommand, stateResetCommand]).demandCommand(1),
  );
}
