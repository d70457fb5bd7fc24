import { writeFile } from 'node:fs/promises';
import type { Argv } from 'yargs';
import { UserError } from '../../common/errors.js';
import { displayId, displayText } from '../../common/log-text.js';
import { fromPlain, prettyExact } from '../../json/index.js';
import { exportConfiguration } from '../../store/export-configuration.js';
import { configurationToWire, versionDetailToWire, versionItemToWire } from '../../store/wire.js';
import { positiveInt, print, say, storeCommandOptions, withExistingStore } from '../store-commands/store-command.js';
import { changeLines, versionChanges } from '../input/version-diff.js';
import { printList } from '../output/list-output.js';
import { configsChangeCommands } from './configs-change.js';
import { configsImportCommand } from './configs-import.js';
import { configsLifecycleCommands } from './configs-lifecycle.js';
import { integerOption } from '../options/option-checks.js';

/** `gex configs list|get|versions|export`: reading configurations, in any store (embedded or remote). */
function configsReadCommands(y: Argv): Argv {
  return y
    .command(
      'list',
      'List the configurations of a component',
      (c) =>
        storeCommandOptions(c).option('deleted', {
          type: 'boolean',
          default: false,
          describe: 'list the trash instead',
        }),
      (args) =>
        withExistingStore(args, async (store) => {
          const configs = await store.listConfigurations(args['component-id'], { isDeleted: args.deleted });
          if (args.json) return print(configs.map((c) => configurationToWire(c)));
          if (configs.length === 0)
            say(`No ${args.deleted ? 'deleted ' : ''}configurations of ${displayId(args['component-id'])}.`);
          // ids and names are the store's text: one of them must not be able to add a line or a column
          printList(
            ['ID', 'NAME', 'VERSION'],
            configs.map((c) => {
              const rows = c.rows.length
                ? `, ${c.rows.length} rows (${c.rows.filter((r) => r.isDisabled).length} disabled)`
                : '';
              return [
                displayId(c.id),
                displayText(c.name),
                `version ${c.version}${rows}${c.isDisabled ? ', disabled' : ''}`,
              ];
            }),
          );
        }),
    )
    .command(
      'get <id>',
      'Show a configuration with its rows and state, or one of its versions (JSON; secrets as stored, encrypted)',
      (c) =>
        storeCommandOptions(c)
          .positional('id', { type: 'string', demandOption: true })
          .option(
            'version',
            integerOption('version', {
              min: 1,
              max: Number.MAX_SAFE_INTEGER,
              describe: 'this version (gex configs versions ID) instead of the current configuration',
            }),
          ),
      (args) =>
        withExistingStore(args, async (store) => {
          if (args.version === undefined)
            return print(configurationToWire(await store.getConfiguration(args['component-id'], args.id)));
          print(versionDetailToWire(await store.getConfigurationVersion(args['component-id'], args.id, args.version)));
        }),
    )
    .command(
      'diff <id> <from> [to]',
      'Show what changed between two versions of a configuration (name, body, rows, their order); [to]: the current version',
      (c) =>
        storeCommandOptions(c)
          .positional('id', { type: 'string', demandOption: true })
          .positional('from', { type: 'string', demandOption: true, describe: 'version number' })
          .positional('to', { type: 'string', describe: 'version number (default: the current version)' }),
      (args) =>
        withExistingStore(args, async (store) => {
          const componentId = args['component-id'];
          const from = positiveInt(args.from, 'version');
          const to =
            args.to === undefined
              ? (await store.getConfiguration(componentId, args.id)).version
              : positiveInt(args.to, 'version');
          const [before, after] = await Promise.all([
            store.getConfigurationVersion(componentId, args.id, from),
            store.getConfigurationVersion(componentId, args.id, to),
          ]);
          const changes = versionChanges(before, after);
          if (args.json) return print(fromPlain({ id: args.id, from, to, changes }));
          if (changes.length === 0)
            return say(`Versions ${from} and ${to} of configuration ${displayId(args.id)} hold the same.`);
          say(`Configuration ${displayId(args.id)}, version ${from} → version ${to}:`);
          for (const line of changeLines(changes)) say(line);
        }),
    )
    .command(
      'versions <id>',
      'List the versions of a configuration, newest first',
      (c) =>
        storeCommandOptions(c)
          .positional('id', { type: 'string', demandOption: true })
          .option('limit', integerOption('limit', { min: 1, max: 10_000, default: 100, describe: 'versions to list' }))
          .option(
            'offset',
            integerOption('offset', {
              min: 0,
              max: Number.MAX_SAFE_INTEGER,
              default: 0,
              describe: 'newest versions to skip',
            }),
          ),
      (args) =>
        withExistingStore(args, async (store) => {
          const versions = await store.listConfigurationVersions(args['component-id'], args.id, {
            limit: args.limit,
            offset: args.offset,
          });
          if (args.json) return print(versions.map(versionItemToWire));
          printList(
            ['VERSION', 'CREATED', 'BY', 'CHANGE'],
            versions.map((v) => [
              String(v.version),
              displayText(v.created),
              displayText(v.creatorToken.description),
              `${displayText(v.changeDescription)}${v.isDeleted ? ' (deleted)' : ''}`,
            ]),
          );
        }),
    )
    .command(
      'export <id>',
      'Write a configuration with its rows, order and states as the document "configs import" reads (secrets stay encrypted)',
      (c) =>
        storeCommandOptions(c).positional('id', { type: 'string', demandOption: true }).option('file', {
          type: 'string',
          describe: 'write it to this file (created, mode 0600; an existing file is not overwritten) instead of stdout',
        }),
      (args) =>
        withExistingStore(args, async (store) => {
          const document = exportConfiguration(await store.getConfiguration(args['component-id'], args.id));
          if (!args.file) return print(document);
          try {
            await writeFile(args.file, `${prettyExact(document)}\n`, { mode: 0o600, flag: 'wx' });
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code === 'EEXIST')
              throw new UserError(
                'GEX_FILE_NOT_WRITTEN',
                `${displayText(args.file)} exists already: name a new file (export never overwrites one)`,
              );
            throw new UserError(
              'GEX_FILE_NOT_WRITTEN',
              `Cannot write ${displayText(args.file)}: ${(e as Error).message}`,
            );
          }
          say(
            `Exported configuration ${displayId(args.id)} with ${(document.get('rows') as unknown[]).length} rows to ${displayText(args.file)}.`,
          );
        }),
    );
}

/** `gex configs …`: read, change and repair configurations in any store (embedded or remote). */
export function configsCommand(yargs: Argv): Argv {
  return yargs.command('configs <action>', 'Inspect and manage stored configurations', (y) =>
    configsLifecycleCommands(
      configsImportCommand(
        configsChangeCommands(
          configsReadCommands(
            y
              .example(
                '$0 configs list --store gex-store.sqlite',
                'the configurations of Generic Extractor in the local store',
              )
              .example(
                '$0 configs edit 123 --set parameters.api.baseUrl=https://api.example.com/',
                'change one value: one new version',
              )
              .example(
                '$0 configs rollback 123 4 --store gex-store.sqlite',
                'restore version 4 of configuration 123 (as a new version)',
              ),
          ),
        ),
      ),
    ).demandCommand(1),
  );
}
