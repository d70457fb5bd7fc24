import type { Argv } from 'yargs';
import { UserError } from '../../../common/errors.js';
import { isJsonObject, type JsonValue } from '../../../json/index.js';
import {
  fields,
  print,
  rowIdsOption,
  storeCommandOptions,
  withExistingStore,
} from '../../store-commands/store-command.js';

/** Generic Extractor's parser keeps its table structure in the component state under these keys. */
const PARSER_KEY = /^json_parser\./;

/** `state.component` of a stored state (`{}` when there is none), without the parser's keys unless `all`. */
function shownState(state: JsonValue, all: boolean): JsonValue {
  const component = isJsonObject(state) ? (state.get('component') ?? new Map()) : new Map();
  if (all || !isJsonObject(component)) return component;
  return new Map([...component].filter(([key]) => !PARSER_KEY.test(key)));
}

/** `gex state show <config-id>` */
export function stateShowCommand(y: Argv): Argv {
  return y.command(
    'show <config-id>',
    'Print the component state (state.component) of a configuration or of one row; the parser keys json_parser.* only with --all',
    (c) =>
      rowIdsOption(
        storeCommandOptions(c).positional('config-id', { type: 'string', demandOption: true }),
        'the state of this row',
      ).option('all', {
        type: 'boolean',
        default: false,
        describe: "include Generic Extractor's parser keys (json_parser.*)",
      }),
    (args) =>
      withExistingStore(args, async (store) => {
        const rowIds = args['row-id'] ?? [];
        if (rowIds.length > 1)
          throw new UserError('GEX_CLI_USAGE', 'state show prints one state: name one row with --row-id');
        const componentId = args['component-id'];
        const state = rowIds.length
          ? (await store.getRow(componentId, args['config-id'], rowIds[0])).state
          : (await store.getConfiguration(componentId, args['config-id'])).state;
        const shown = shownState(state, args.all);
        if (args.json) return print(fields({ id: args['config-id'], rowId: rowIds[0] ?? null, component: shown }));
        print(shown);
      }),
  );
}
