import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runCommand } from './commands/run.js';
import { loggingOptions } from './logging.js';

/** The `gex` command line. */
export async function main(argv: string[]): Promise<void> {
  let cli = yargs(hideBin(argv)).scriptName('gex').strict().demandCommand(1, 'Name a command: gex <command> --help');
  cli = loggingOptions(cli);
  cli = runCommand(cli);
  await cli.help().version().parseAsync();
}
