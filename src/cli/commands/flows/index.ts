import type { Argv } from 'yargs';
import { withSubCommands } from '../sub-commands.js';
import { flowsShowCommand } from './show.js';
import { flowsValidateCommand } from './validate.js';

/** `gex flows validate|show`: flow configurations (keboola.orchestrator, keboola.flow) checked and drawn. */
export function flowsCommand(yargs: Argv): Argv {
  return yargs.command(
    'flows <action>',
    'Check and show flow configurations (keboola.orchestrator, keboola.flow)',
    (y) =>
      withSubCommands(
        y
          .example('$0 flows validate nightly.json', 'check a flow file with the rules a store applies on write')
          .example('$0 flows show 123 --store gex-store.sqlite', 'a stored flow as a graph of phases and tasks'),
        [flowsValidateCommand, flowsShowCommand],
      ).demandCommand(1),
  );
}
