import type { Argv } from 'yargs';
import { UserError } from '../../common/errors.js';
import { displayId } from '../../common/log-text.js';
import { isJsonObject, type JsonValue } from '../../json/index.js';
import type { ConfigStore } from '../../store/config-store.js';
import {
  fields,
  print,
  rowIdsOption,
  say,
  storeCommandOptions,
  withExistingStore,
  withStore,
} from '../store-commands/store-command.js';

/** Generic Extractor's parser keeps its table structure in the component state under these keys. */
const PARSER_KEY = /^json_parser\./;

/** `state.component` of a stored state (`{}` when there is none), without the parser's keys unless `all`. */
export function componentState(state: JsonValue, all: boolean): JsonValue {
  const component = isJsonObject(state) ? (state.get('component') ?? new Map()) : new Map();
  if (all || !isJsonObject(component)) return component;
  return new Map([...component].filter(([key]) => !PARSER_KEY.test(key)));
}

/** Resets the state of a configuration, or of each row named, to `{}`. */
export async function resetState(
  store: ConfigStore,
  componentId: string,
  configId: string,
  rowIds: string[],
  json: boolean,
): Promise<void> {
  const empty = new Map();
  rowIds = [...new Set(rowIds)];
  if (rowIds.length === 0) await store.updateConfigurationState(componentId, configId, empty);
  else {
    // an unknown row is named here; then the states are saved as one change (all or none, see saveStates)
    const rows = new Set((await store.listRows(componentId, configId)).map((r) => r.id));
    const unknown = rowIds.filter((id) => !rows.has(id));
    if (unknown.length)
      throw new UserError(
        'GEX_ROW_NOT_FOUND',
        `Configuration ${displayId(configId)} has no row ${unknown.map(displayId).join(', ')}: nothing was reset`,
      );
    await store.saveStates(
      componentId,
      configId,
      rowIds.map((rowId) => ({ rowId, state: empty })),
    );
  }
  if (json) return print(fields({ id: configId, rowIds: rowIds, state: empty }));
  const what = rowIds.length ? `row${rowIds.length > 1 ? 's' : ''} ${rowIds.map(displayId).join(', ')} of ` : '';
  say(`State of ${what}configuration ${displayId(configId)} reset to {}.`);
}

/** `gex state show|reset`: the state a run starts from. */
export function stateCommand(yargs: Argv): Argv {
  return yargs.command('state <action>', 'Show or reset the state of stored configurations and rows', (y) =>
    y
      .command(
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
            const shown = componentState(state, args.all);
            if (args.json) return print(fields({ id: args['config-id'], rowId: rowIds[0] ?? null, component: shown }));
            print(shown);
          }),
      )
      .command(
        'reset <config-id>',
        'Reset the state of a configuration (or of rows) to {}: the next run starts from scratch',
        (c) =>
          rowIdsOption(
            storeCommandOptions(c).positional('config-id', { type: 'string', demandOption: true }),
            'reset these rows only',
          ),
        (args) =>
          withStore(args, (store) =>
            resetState(store, args['component-id'], args['config-id'], args['row-id'] ?? [], args.json),
          ),
      )
      .demandCommand(1),
  );
}
