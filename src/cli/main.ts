import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { checkCommand } from './commands/check.js';
import { gexVersion } from '../common/version.js';
import { componentsCommand } from './commands/components.js';
import { configsCommand } from './commands/configs.js';
import { rowsCommand } from './commands/rows.js';
import { runCommand } from './commands/run.js';
import { schemaCommand } from './commands/schema.js';
import { serveCommand } from './commands/serve.js';
import { stateCommand } from './commands/state.js';
import { tablesCommand } from './commands/tables.js';
import { tokensCommand } from './commands/tokens.js';
import { ignoreClosedOutput } from './closed-output.js';
import { loggingOptions } from './logging.js';
import { installStopSignals } from './stop-signals.js';
import { stopWhenParentGone } from './parent-watch.js';
import { jobsCommand } from './commands/jobs.js';
import { schedulesCommand } from './commands/schedules.js';
import { workerCommand } from './commands/worker.js';
import { failHandler } from './unknown-command.js';

/** Every command, by name: registered from this one list, which also answers a mistyped one. */
const COMMANDS: ReadonlyArray<readonly [string, (yargs: Argv) => Argv]> = [
  ['run', runCommand],
  ['check', checkCommand],
  ['schema', schemaCommand],
  ['serve', serveCommand],
  ['tokens', tokensCommand],
  ['components', componentsCommand],
  ['configs', configsCommand],
  ['rows', rowsCommand],
  ['state', stateCommand],
  ['tables', tablesCommand],
  ['jobs', jobsCommand],
  ['schedules', schedulesCommand],
  ['worker', workerCommand],
];

/** The `gex` command line. */
export async function main(argv: string[]): Promise<void> {
  installStopSignals();
  stopWhenParentGone();
  ignoreClosedOutput();
  const args = hideBin(argv);
  let cli = yargs(args)
    .scriptName('gex')
    .strict()
    .recommendCommands()
    .demandCommand(1, 'Name a command: gex <command> --help');
  cli = loggingOptions(cli);
  for (const [, register] of COMMANDS) cli = register(cli);
  await cli
    .example(
      '$0 run --config-id 123 --store gex-store.sqlite',
      'run a stored configuration, row by row (tables in ./data/rows/…)',
    )
    .example('$0 run --data-dir ./data', 'run ./data/config.json (Keboola common interface)')
    .example('$0 check --config-id 123 --request', 'check a configuration and send the first request of each job')
    .example('$0 serve --host 0.0.0.0 --store gex-store.sqlite', 'serve the store as a Storage API')
    .example(
      '$0 configs list --store https://gex.example.com --token $KBC_TOKEN',
      'list the configurations of a remote store',
    )
    .fail(
      failHandler(
        args,
        COMMANDS.map(([name]) => name),
      ),
    )
    .wrap(null)
    .help()
    .version(gexVersion() ?? 'unknown')
    .alias('version', 'V')
    .parseAsync();
}
