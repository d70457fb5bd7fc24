import type { Argv } from 'yargs';
import { displayText } from '../../../common/log-text.js';
import { versionItemToWire } from '../../../store/wire/configurations.js';
import { print, storeCommandOptions, withExistingStore } from '../../store-commands/store-command.js';
import { printList } from '../../output/list-output.js';
import { integerOption } from '../../options/option-checks.js';

/** `gex configs versions <id>` */
export function configsVersionsCommand(y: Argv): Argv {
  return y.command(
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
  );
}
