import { readFile } from 'node:fs/promises';
import type { Argv } from 'yargs';
import { UserError } from '../../common/errors.js';
import { displayId, displayText, quoteForLog } from '../../common/log-text.js';
import { decodeJson, JsonSyntaxError, prettyExact, type JsonValue } from '../../json/index.js';
import { importConfiguration } from '../../store/import-configuration.js';
import { configurationToWire, versionItemToWire } from '../../store/wire.js';
import { runCliAction } from '../command-runner.js';
import { componentOption, openStoreFromArgs, storeOptions, type ComponentArgs } from '../store-options.js';

interface JsonArg {
  json: boolean;
}

function positiveInt(value: unknown, name: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UserError(`${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return n;
}

function print(value: JsonValue): void {
  process.stdout.write(`${prettyExact(value)}\n`);
}

type Work<A> = (store: Awaited<ReturnType<typeof openStoreFromArgs>>['store'], args: A) => Promise<void>;

/** Runs `work` with the store the arguments name and closes it. */
function withStore<A extends ComponentArgs>(args: A, work: Work<A>, options: { mustExist?: boolean } = {}): Promise<void> {
  return runCliAction(async (logger) => {
    const opened = await openStoreFromArgs(args, logger, options);
    try {
      await work(opened.store, args);
    } finally {
      await opened.close();
    }
  });
}

/** For commands that only read: a store that does not exist is an error, and none is created. */
function withExistingStore<A extends ComponentArgs>(args: A, work: Work<A>): Promise<void> {
  return withStore(args, work, { mustExist: true });
}

const common = <T>(y: Argv<T>) => componentOption(storeOptions(y)).option('json', { type: 'boolean', default: false, describe: 'print JSON' }) as Argv<T & ComponentArgs & JsonArg>;

/** `gex configs …`: read and repair configurations in any store (embedded or remote). */
export function configsCommand(yargs: Argv): Argv {
  return yargs.command('configs <action>', 'Inspect and manage stored configurations', (y) =>
    y
      .example('$0 configs list --store gex-store.sqlite', 'the configurations of Generic Extractor in the local store')
      .example('$0 configs get 123 --store https://gex.example.com --token $KBC_TOKEN --json', 'one configuration with its rows, as JSON')
      .example('$0 configs rollback 123 4 --store gex-store.sqlite', 'restore version 4 of configuration 123 (as a new version)')
      .command(
        'list',
        'List the configurations of a component',
        (c) => common(c).option('deleted', { type: 'boolean', default: false, describe: 'list the trash instead' }),
        (args) =>
          withExistingStore(args, async (store) => {
            const configs = await store.listConfigurations(args['component-id'], { isDeleted: args.deleted });
            if (args.json) return print(configs.map((c) => configurationToWire(c)));
            if (configs.length === 0) process.stdout.write(`No ${args.deleted ? 'deleted ' : ''}configurations of ${args['component-id']}.\n`);
            for (const c of configs) {
              const rows = c.rows.length ? `, ${c.rows.length} rows (${c.rows.filter((r) => r.isDisabled).length} disabled)` : '';
              // ids and names are the store's text: one of them must not be able to add a line or a column
              process.stdout.write(`${displayId(c.id)}\t${displayText(c.name)}\tversion ${c.version}${rows}${c.isDisabled ? ', disabled' : ''}\n`);
            }
          }),
      )
      .command(
        'get <id>',
        'Show a configuration with its rows and state',
        (c) => common(c).positional('id', { type: 'string', demandOption: true }),
        (args) => withExistingStore(args, async (store) => print(configurationToWire(await store.getConfiguration(args['component-id'], String(args.id))))),
      )
      .command(
        'versions <id>',
        'List the versions of a configuration, newest first',
        (c) =>
          common(c)
            .positional('id', { type: 'string', demandOption: true })
            .option('limit', { type: 'number', default: 100 })
            .option('offset', { type: 'number', default: 0 }),
        (args) =>
          withExistingStore(args, async (store) => {
            const versions = await store.listConfigurationVersions(args['component-id'], String(args.id), { limit: args.limit, offset: args.offset });
            if (args.json) return print(versions.map(versionItemToWire));
            for (const v of versions) {
              process.stdout.write(`${v.version}\t${displayText(v.created)}\t${displayText(v.creatorToken.description)}\t${displayText(v.changeDescription)}${v.isDeleted ? ' (deleted)' : ''}\n`);
            }
          }),
      )
      .command(
        'rollback <id> <target>',
        'Make a version the current one again (as a new version)',
        (c) =>
          common(c)
            .positional('id', { type: 'string', demandOption: true })
            .positional('target', { type: 'string', demandOption: true, describe: 'version number' })
            .option('change-description', { type: 'string' }),
        (args) =>
          withStore(args, async (store) => {
            const version = positiveInt(args.target, 'version');
            const result = await store.rollbackConfiguration(args['component-id'], String(args.id), version, args['change-description']);
            process.stdout.write(`Configuration ${args.id} rolled back to version ${version}: now version ${result.version}.\n`);
          }),
      )
      .command(
        'copy <id> <target>',
        'Create a new configuration from a version',
        (c) =>
          common(c)
            .positional('id', { type: 'string', demandOption: true })
            .positional('target', { type: 'string', demandOption: true, describe: 'version number' })
            .option('name', { type: 'string', demandOption: true, describe: 'name of the new configuration' })
            .option('description', { type: 'string' })
            .option('change-description', { type: 'string' }),
        (args) =>
          withStore(args, async (store) => {
            const copy = await store.copyConfiguration(args['component-id'], String(args.id), positiveInt(args.target, 'version'), {
              name: args.name,
              description: args.description,
              changeDescription: args['change-description'],
            });
            if (args.json) return print(configurationToWire(copy));
            process.stdout.write(`Created configuration ${displayId(copy.id)} ${quoteForLog(copy.name)} from version ${args.target} of ${args.id}.\n`);
          }),
      )
      .command(
        'import <file>',
        'Create a configuration (with rows and their order) from a JSON file',
        (c) => common(c).positional('file', { type: 'string', demandOption: true }),
        (args) =>
          withStore(args, async (store) => {
            let document: JsonValue;
            try {
              document = decodeJson(await readFile(String(args.file), 'utf8'));
            } catch (e) {
              if (e instanceof JsonSyntaxError) throw new UserError(`${args.file} is not valid JSON: ${e.message}`);
              throw new UserError(`Cannot read ${args.file}: ${(e as Error).message}`);
            }
            const c = await importConfiguration(store, args['component-id'], document);
            if (args.json) return print(configurationToWire(c));
            process.stdout.write(`Created configuration ${displayId(c.id)} ${quoteForLog(c.name)} with ${c.rows.length} rows (version ${c.version}).\n`);
          }),
      )
      .command(
        'state-reset <id>',
        'Reset the state of a configuration (or of one row) to {}: the next run starts from scratch',
        (c) => common(c).positional('id', { type: 'string', demandOption: true }).option('row-id', { type: 'string', describe: 'reset this row only' }),
        (args) =>
          withStore(args, async (store) => {
            const empty = new Map();
            if (args['row-id']) await store.updateRowState(args['component-id'], String(args.id), args['row-id'], empty);
            else await store.updateConfigurationState(args['component-id'], String(args.id), empty);
            process.stdout.write(`State of ${args['row-id'] ? `row ${args['row-id']} of ` : ''}configuration ${args.id} reset to {}.\n`);
          }),
      )
      .demandCommand(1),
  );
}
