import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { checkCommand } from './commands/check.js';
import { componentsCommand } from './commands/components.js';
import { configsCommand } from './commands/configs.js';
import { rowsCommand } from './commands/rows.js';
import { runCommand } from './commands/run.js';
import { schemaCommand } from './commands/schema.js';
import { serveCommand } from './commands/serve.js';
import { stateCommand } from './commands/state.js';
import { tokensCommand } from './commands/tokens.js';
import { ignoreClosedOutput } from './closed-output.js';
import { loggingOptions } from './logging.js';
import { installStopSignals } from './stop-signals.js';

/** The `gex` command line. */
export async function main(argv: string[]): Promise<void> {
  installStopSignals();
  ignoreClosedOutput();
  let cli = yargs(hideBin(argv)).scriptName('gex').strict().demandCommand(1, 'Name a command: gex <command> --help');
  cli = loggingOptions(cli);
  cli = runCommand(cli);
  cli = checkCommand(cli);
  cli = schemaCommand(cli);
  cli = serveCommand(cli);
  cli = tokensCommand(cli);
  cli = componentsCommand(cli);
  cli = configsCommand(cli);
  cli = rowsCommand(cli);
  cli = stateCommand(cli);
  await cli.wrap(null).help().version().parseAsync();
}
