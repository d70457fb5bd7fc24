import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { gexVersion } from '../common/version.js';
import { componentsCommand } from './commands/components.js';
import { configsCommand } from './commands/configs.js';
import { runCommand } from './commands/run.js';
import { serveCommand } from './commands/serve.js';
import { tokensCommand } from './commands/tokens.js';
import { ignoreClosedOutput } from './closed-output.js';
import { loggingOptions } from './logging.js';
import { installStopSignals } from './stop-signals.js';
import { failHandler } from './unknown-command.js';

const COMMANDS = ['run', 'serve', 'tokens', 'components', 'configs'];

/** The `gex` command line. */
export async function main(argv: string[]): Promise<void> {
  installStopSignals();
  ignoreClosedOutput();
  const args = hideBin(argv);
  let cli = yargs(args).scriptName('gex').strict().recommendCommands().demandCommand(1, 'Name a command: gex <command> --help');
  cli = loggingOptions(cli);
  cli = runCommand(cli);
  cli = serveCommand(cli);
  cli = tokensCommand(cli);
  cli = componentsCommand(cli);
  cli = configsCommand(cli);
  await cli
    .example('$0 run --config-id 123 --store gex-store.sqlite --data-dir ./data', 'run a stored configuration, row by row')
    .example('$0 run --data-dir ./data', 'run ./data/config.json (Keboola common interface)')
    .example('$0 serve --host 0.0.0.0 --store gex-store.sqlite', 'serve the store as a Storage API')
    .example('$0 configs list --store https://gex.example.com --token $KBC_TOKEN', 'list the configurations of a remote store')
    .fail(failHandler(args, COMMANDS))
    .wrap(null)
    .help()
    .version(gexVersion() ?? 'unknown')
    .alias('version', 'V')
    .parseAsync();
}
