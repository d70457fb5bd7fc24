import type { Argv } from 'yargs';
import { printList } from '../output/list-output.js';
import { UserError } from '../../common/errors.js';
import { displayId, displayText } from '../../common/log-text.js';
import type { ConfigStore } from '../../store/config-store.js';
import type { Row, UpdateRowInput } from '../../store/types.js';
import { rowToWire } from '../../store/wire.js';
import { optionLikeIdNote } from '../options/id-list.js';
import { bodyFromArgs, bodyOptions, changeSummary, editedBody } from '../input/body-change.js';
import {
  fields,
  print,
  rowIdsOption,
  type StoreCommandArgs,
  say,
  storeCommandOptions,
  withExistingStore,
  withStore,
} from '../store-commands/store-command.js';
import { checkWrite, enforceWriteCheck, forceOption, rowLabel, rowUnit } from '../store-commands/write-check.js';
import { moveRow, type Placement } from './row-order.js';

const withConfig = <T>(c: Argv<T>) =>
  storeCommandOptions(c).positional('config-id', { type: 'string', demandOption: true });
const described = <T>(y: Argv<T>) =>
  y.option('change-description', { type: 'string', describe: 'the description of the new version' }) as Argv<
    T & { 'change-description'?: string }
  >;

function rowCells(r: Row): string[] {
  return [displayId(r.id), displayText(r.name), `version ${r.version}`, ...(r.isDisabled ? ['disabled'] : [])];
}

/** The rows named with --row-id (at least one), each checked to exist before anything changes. */
async function namedRows(
  store: ConfigStore,
  componentId: string,
  configId: string,
  rowIds: string[] | undefined,
): Promise<string[]> {
  if (!rowIds?.length) throw new UserError('GEX_CLI_USAGE', 'Name the rows with --row-id (repeatable or a comma list)');
  const existing = new Set((await store.listRows(componentId, configId)).map((r) => r.id));
  const unknown = rowIds.filter((id) => !existing.has(id));
  if (unknown.length)
    throw new UserError(
      'GEX_ROW_NOT_FOUND',
      `Configuration ${displayId(configId)} has no row ${unknown.map(displayId).join(', ')}: nothing was changed`,
    );
  return rowIds;
}

function setDisabled(isDisabled: boolean) {
  return (args: StoreCommandArgs & { 'config-id': string; 'row-id'?: string[] }) =>
    withStore(args, async (store) => {
      const changed: Row[] = [];
      for (const rowId of await namedRows(store, args['component-id'], args['config-id'], args['row-id'])) {
        changed.push(
          await store.updateRow(args['component-id'], args['config-id'], rowId, {
            isDisabled,
            changeDescription: `Row ${rowId} ${isDisabled ? 'disabled' : 'enabled'}`,
          }),
        );
      }
      if (args.json) return print(changed.map((r) => rowToWire(r)));
      for (const r of changed)
        say(
          `Row ${displayId(r.id)} of configuration ${displayId(args['config-id'])} ${isDisabled ? 'disabled' : 'enabled'}.`,
        );
    });
}

/** `gex rows …`: the rows of a stored configuration, in any store. */
export function rowsCommand(yargs: Argv): Argv {
  return yargs.command('rows <action>', 'List and change the rows of a stored configuration', (y) =>
    y
      .command(
        'list <config-id>',
        'List the rows in the order they run',
        (c) => withConfig(c),
        (args) =>
          withExistingStore(args, async (store) => {
            const config = await store.getConfiguration(args['component-id'], args['config-id']);
            if (args.json) return print(config.rows.map((r) => rowToWire(r)));
            if (config.rows.length === 0) say(`Configuration ${displayId(config.id)} has no rows.`);
            printList(['ID', 'NAME', 'VERSION', 'DISABLED'], config.rows.map(rowCells));
          }),
      )
      .command(
        'add <config-id>',
        'Add a row (its body from --file and/or --set; {} without either)',
        (c) =>
          forceOption(bodyOptions(described(withConfig(c))))
            .option('row-id', { type: 'string', describe: 'its id (default: the next free number)' })
            .option('name', { type: 'string', default: '' })
            .option('description', { type: 'string', default: '' })
            .option('disabled', { type: 'boolean', default: false, describe: 'add it disabled' }),
        (args) =>
          withStore({ ...args, 'row-id': undefined }, async (store, _, opened) => {
            const configuration = (await bodyFromArgs(new Map(), args)) ?? new Map();
            const root = await store.getConfiguration(args['component-id'], args['config-id']);
            const label = args['row-id'] === undefined ? 'the new row' : `row ${displayId(args['row-id'])}`;
            const unit = rowUnit(label, root.configuration, configuration);
            enforceWriteCheck(
              await checkWrite({ label, body: configuration }, [unit], { opened, componentId: args['component-id'] }),
              args.force,
            );
            const row = await store.createRow(args['component-id'], args['config-id'], {
              rowId: args['row-id'],
              name: args.name,
              description: args.description,
              isDisabled: args.disabled,
              configuration,
              changeDescription: args['change-description'],
            });
            if (args.json) return print(rowToWire(row));
            say(
              `Added row ${displayId(row.id)} ${displayText(row.name)} to configuration ${displayId(args['config-id'])}.`,
            );
            const note = optionLikeIdNote('--row-id', row.id);
            if (note) process.stderr.write(`${note}\n`);
          }),
      )
      .command(
        'edit <config-id>',
        'Change one row as ONE new version: its body in $EDITOR (else $VISUAL, else vi), or with --file / --set; --name, --description',
        (c) =>
          forceOption(bodyOptions(described(rowIdsOption(withConfig(c), 'the row to change'))))
            .option('name', { type: 'string', describe: 'a new name' })
            .option('description', { type: 'string', describe: 'a new description' }),
        (args) =>
          withStore(args, async (store, _, opened) => {
            const [rowId, ...more] = args['row-id'] ?? [];
            if (rowId === undefined || more.length)
              throw new UserError('GEX_CLI_USAGE', 'rows edit changes one row: name it with --row-id');
            const root = await store.getConfiguration(args['component-id'], args['config-id']);
            const before = await store.getRow(args['component-id'], args['config-id'], rowId);
            const onlyMeta = args.name !== undefined || args.description !== undefined;
            const label = rowLabel(before);
            const configuration = await editedBody(
              before.configuration,
              args,
              { open: !onlyMeta, fileName: 'row.json' },
              async (body) => {
                const unit = rowUnit(label, root.configuration, body, before.configuration);
                enforceWriteCheck(
                  await checkWrite({ label, body }, [unit], { opened, componentId: args['component-id'] }),
                  args.force,
                );
              },
            );
            const input: UpdateRowInput = { configuration, name: args.name, description: args.description };
            const changed = changeSummary(before, input);
            const unchanged = () => say(`No change: row ${displayId(rowId)} stays at version ${before.version}.`);
            if (!changed) return args.json ? print(rowToWire(before)) : unchanged();
            input.changeDescription = args['change-description'] ?? `Row ${rowId} changed: ${changed}`;
            const after = await store.updateRow(args['component-id'], args['config-id'], rowId, input);
            if (args.json) return print(rowToWire(after));
            if (after.version === before.version) return unchanged();
            say(
              `Row ${displayId(rowId)} of configuration ${displayId(args['config-id'])} is now version ${after.version} (changed: ${changed}).`,
            );
          }),
      )
      .command(
        'remove <config-id>',
        'Remove rows from a configuration (one new configuration version per row)',
        (c) => described(rowIdsOption(withConfig(c), 'the rows to remove')),
        (args) =>
          withStore(args, async (store) => {
            const removed = await namedRows(store, args['component-id'], args['config-id'], args['row-id']);
            for (const rowId of removed)
              await store.deleteRow(args['component-id'], args['config-id'], rowId, args['change-description']);
            if (args.json) return print(fields({ id: args['config-id'], removedRowIds: removed }));
            say(
              `Removed row${removed.length > 1 ? 's' : ''} ${removed.map(displayId).join(', ')} from configuration ${displayId(args['config-id'])}.`,
            );
          }),
      )
      .command(
        'enable <config-id>',
        'Enable rows: they run again',
        (c) => rowIdsOption(withConfig(c), 'the rows to enable'),
        (args) => setDisabled(false)(args),
      )
      .command(
        'disable <config-id>',
        'Disable rows: runs skip them unless named with --row-id',
        (c) => rowIdsOption(withConfig(c), 'the rows to disable'),
        (args) => setDisabled(true)(args),
      )
      .command(
        'move <config-id> <row-id>',
        'Change where a row runs: --before R, --after R, --first or --last (sets rowsSortOrder)',
        (c) =>
          described(withConfig(c))
            .positional('row-id', { type: 'string', demandOption: true })
            .option('before', { type: 'string', describe: 'just before this row' })
            .option('after', { type: 'string', describe: 'just after this row' })
            .option('first', { type: 'boolean', default: false })
            .option('last', { type: 'boolean', default: false }),
        (args) =>
          withStore(args, async (store) => {
            const places: Placement[] = [];
            if (args.before !== undefined) places.push({ before: args.before });
            if (args.after !== undefined) places.push({ after: args.after });
            if (args.first) places.push('first');
            if (args.last) places.push('last');
            if (places.length !== 1)
              throw new UserError(
                'GEX_CLI_USAGE',
                'rows move needs exactly one of --before ROW, --after ROW, --first, --last',
              );
            const config = await store.getConfiguration(args['component-id'], args['config-id']);
            const order = moveRow(
              config.rows.map((r) => r.id),
              args['row-id'],
              places[0],
            );
            const same =
              order.join('\u0000') === config.rows.map((r) => r.id).join('\u0000') && config.rowsSortOrder.length > 0;
            const after = same
              ? config
              : await store.updateConfiguration(args['component-id'], args['config-id'], {
                  rowsSortOrder: order,
                  changeDescription: args['change-description'] ?? `Row ${args['row-id']} moved`,
                });
            if (args.json)
              return print(fields({ id: after.id, version: after.version, rowsSortOrder: after.rowsSortOrder }));
            if (same)
              return say(`No change: row ${displayId(args['row-id'])} is there already (version ${config.version}).`);
            say(
              `Rows of configuration ${displayId(after.id)} now run as: ${after.rowsSortOrder.map(displayId).join(', ')} (version ${after.version}).`,
            );
          }),
      )
      .demandCommand(1),
  );
}
