import type { Argv } from 'yargs';
import { UserError } from '../../../common/errors.js';
import { displayText } from '../../../common/log-text.js';
import { plural } from '../../../common/text.js';
import { parseFlowDefinition } from '../../../store/flows/flow-definition.js';
import { FlowDefinitionError } from '../../../store/flows/flow-problems.js';
import { flowGraph } from '../../output/flow-graph.js';
import { readJsonFile } from '../../input/json-input.js';
import { runCliAction } from '../../store-commands/command-runner.js';
import { FLOW_COMPONENT_CHOICES, flowBodyOf, guessedFlowComponent } from './flow-source.js';

/** `gex flows validate FILE`: the rules a store applies when the flow is written; exit 1 lists each problem. */
export function flowsValidateCommand(y: Argv): Argv {
  return y.command(
    'validate <file>',
    'Check a flow file ({phases, tasks}, or a configuration holding them; - for stdin) with the rules a store applies on write',
    (c) =>
      c.positional('file', { type: 'string', demandOption: true }).option('component-id', {
        type: 'string',
        choices: FLOW_COMPONENT_CHOICES,
        describe: 'the flow component (default: keboola.flow when a phase has "next" or a task a "type")',
      }),
    (args) =>
      runCliAction(async () => {
        const body = flowBodyOf(await readJsonFile(args.file));
        const component = args['component-id'] ?? guessedFlowComponent(body);
        let definition;
        try {
          definition = parseFlowDefinition(component, body);
        } catch (error) {
          if (!(error instanceof FlowDefinitionError)) throw error;
          const problems = (error.details ?? []).map(({ key, message }) => `  ${key || '(the file)'}: ${message}`);
          throw new UserError(
            'GEX_CONFIG_INVALID',
            `${displayText(args.file)} is not a valid ${component} configuration:\n${problems.join('\n')}`,
          );
        }
        const phases = plural(definition.phases.length, 'phase');
        const tasks = plural(definition.tasks.length, 'task');
        process.stdout.write(`Valid ${component} configuration: ${phases}, ${tasks}.\n${flowGraph(definition)}`);
      }),
  );
}
