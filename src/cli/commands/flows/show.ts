import type { Argv } from 'yargs';
import { UserError } from '../../../common/errors.js';
import { displayId, displayText } from '../../../common/log-text.js';
import { parseFlowDefinition } from '../../../store/flows/flow-definition.js';
import { FLOW_COMPONENT_ID, ORCHESTRATOR_COMPONENT_ID, type FlowComponentId } from '../../../store/flows/flow-model.js';
import { StoreError } from '../../../store/store-error.js';
import type { Configuration } from '../../../store/types.js';
import { storeOptions } from '../../options/store-options.js';
import { flowGraph } from '../../output/flow-graph.js';
import { withExistingStore } from '../../store-commands/store-command.js';
import { FLOW_COMPONENT_CHOICES } from './flow-source.js';

/** `gex flows show ID`: a stored flow's phases and tasks as a graph (either flow component, found by id). */
export function flowsShowCommand(y: Argv): Argv {
  return y.command(
    'show <id>',
    'Show a stored flow as a graph: phases in run order, their tasks, transitions',
    (c) =>
      storeOptions(c).positional('id', { type: 'string', demandOption: true }).option('component-id', {
        type: 'string',
        choices: FLOW_COMPONENT_CHOICES,
        describe: 'the flow component (default: keboola.orchestrator, then keboola.flow)',
      }),
    (args) => {
      const given = args['component-id'];
      return withExistingStore({ ...args, 'component-id': given ?? ORCHESTRATOR_COMPONENT_ID }, async (store) => {
        let found: { component: FlowComponentId; configuration: Configuration } | undefined;
        for (const component of given ? [given] : ([ORCHESTRATOR_COMPONENT_ID, FLOW_COMPONENT_ID] as const)) {
          try {
            found = { component, configuration: await store.getConfiguration(component, args.id) };
            break;
          } catch (error) {
            if (!(error instanceof StoreError && error.status === 404)) throw error;
          }
        }
        if (!found) {
          throw new UserError(
            'GEX_STORE_NOT_FOUND',
            `No flow ${displayId(args.id)} in keboola.orchestrator or keboola.flow.`,
          );
        }
        const { component, configuration } = found;
        const definition = parseFlowDefinition(component, configuration.configuration, { configId: configuration.id });
        process.stdout.write(
          `${displayText(configuration.name)} (${component} ${displayId(configuration.id)}, version ${configuration.version})\n${flowGraph(definition)}`,
        );
      });
    },
  );
}
