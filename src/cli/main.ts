import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { gexVersion } from '../common/version.js';
import { ignoreClosedOutput } from './process/closed-output.js';
import { loggingOptions } from './process/logging.js';
import { installStopSignals } from './process/stop-signals.js';
import { stopWhenParentGone } from './process/parent-watch.js';
import { commandWord } from './process/command-word.js';
import { failHandler } from './options/unknown-command.js';
import { missingValueProblem, numberTextProblem, type KnownOptions } from './options/option-checks.js';

type Register = (yargs: Argv) => Argv;

/**
 * Every command, by name: registered from this one list, which also answers a mistyped one. A
 * command's module is imported only when it is registered: a run does not load (compile) the
 * modules of the other commands and what only they import (a third of the code it loaded).
 */
const COMMANDS: ReadonlyArray<readonly [string, () => Promise<Register>]> = [
  ['run', async () => (await import('./commands/run.js')).runCommand],
  ['check', async () => (await import('./commands/check.js')).checkCommand],
  ['schema', async () => (await import('./commands/schema.js')).schemaCommand],
  ['serve', async () => (await import('./commands/serve.js')).serveCommand],
  ['tokens', async () => (await import('./commands/tokens/index.js')).tokensCommand],
  ['components', async () => (await import('./commands/components.js')).componentsCommand],
  ['configs', async () => (await import('./commands/configs/index.js')).configsCommand],
  ['rows', async () => (await import('./commands/rows/index.js')).rowsCommand],
  ['state', async () => (await import('./commands/state/index.js')).stateCommand],
  ['tables', async () => (await import('./commands/tables/index.js')).tablesCommand],
  ['jobs', async () => (await import('./commands/jobs/index.js')).jobsCommand],
  ['schedules', async () => (await import('./commands/schedules/index.js')).schedulesCommand],
  ['flows', async () => (await import('./commands/flows/index.js')).flowsCommand],
  ['notifications', async () => (await import('./commands/notifications/index.js')).notificationsCommand],
  ['worker', async () => (await import('./commands/worker.js')).workerCommand],
];

/**
 * The commands to register: the one the command line names, else all of them (no command, help
 * and a mistyped name need the whole list).
 */
function commandsFor(args: readonly string[]): Promise<Register[]> {
  const word = commandWord(args);
  const named = COMMANDS.filter(([name]) => name === word);
  return Promise.all((named.length === 1 ? named : COMMANDS).map(([, load]) => load()));
}

/** The `gex` command line. */
export async function main(argv: string[]): Promise<void> {
  installStopSignals();
  stopWhenParentGone();
  ignoreClosedOutput();
  const args = hideBin(argv);
  if (commandWord(args) === undefined && args.some((arg) => arg === '--version' || arg === '-V')) {
    process.stdout.write(`${gexVersion() ?? 'unknown'}\n`);
    return;
  }
  let cli: Argv = yargs(args)
    .scriptName('gex')
    .strict()
    .recommendCommands()
    .demandCommand(1, 'Name a command: gex <command> --help')
    // yargs' own --version would be an option of every command, shadowing a command's own
    // (`gex configs get ID --version 3`): the version is the top level's alone (answered above)
    .version(false)
    .option('version', { alias: 'V', type: 'boolean', global: false, describe: 'Show the version of gex' });
  cli = loggingOptions(cli);
  for (const register of await commandsFor(args)) cli = register(cli);
  // yargs' options of the command being parsed (getOptions is not in its typings)
  const known = () => (cli as unknown as { getOptions(): KnownOptions }).getOptions();
  await cli
    // every command: no option that takes a value without one, no number option that is not a whole number
    .check(() => missingValueProblem(args, known()) ?? numberTextProblem(args, known()) ?? true, true)
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
        known,
      ),
    )
    .wrap(null)
    .help()
    .parseAsync();
}
