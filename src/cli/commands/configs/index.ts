import type { Argv } from 'yargs';
import { withSubCommands } from '../sub-commands.js';
import { configsCopyCommand } from './copy.js';
import { configsCreateCommand } from './create.js';
import { configsDeleteCommand } from './delete.js';
import { configsDiffCommand } from './diff.js';
import { configsEditCommand } from './edit.js';
import { configsExportCommand } from './export.js';
import { configsGetCommand } from './get.js';
import { configsImportCommand } from './import.js';
import { configsListCommand } from './list.js';
import { configsPurgeCommand } from './purge.js';
import { configsRestoreCommand } from './restore.js';
import { configsRollbackCommand } from './rollback.js';
import { configsStateResetCommand } from './state-reset.js';
import { configsVersionsCommand } from './versions.js';

/**
 * `gex configs …`: read (list, get, diff, versions, export), change (create, edit, rollback, copy,
 * import) and repair (delete, restore, purge, state-reset) configurations in any store (embedded or remote).
 */
export function configsCommand(yargs: Argv): Argv {
  return yargs.command('configs <action>', 'Inspect and manage stored configurations', (y) =>
    withSubCommands(
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
      [
        configsListCommand,
        configsGetCommand,
        configsDiffCommand,
        configsVersionsCommand,
        configsExportCommand,
        configsCreateCommand,
        configsEditCommand,
        configsRollbackCommand,
        configsCopyCommand,
        configsImportCommand,
        configsDeleteCommand,
        configsRestoreCommand,
        configsPurgeCommand,
        configsStateResetCommand,
      ],
    ).demandCommand(1),
  );
}
