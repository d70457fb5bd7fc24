import type { Argv } from 'yargs';
import { withSubCommands } from '../sub-commands.js';
import { tablesDeleteCommand } from './delete.js';
import { tablesExportCommand } from './export.js';
import { tablesImportCommand } from './import.js';
import { tablesListCommand } from './list.js';
import { tablesPreviewCommand } from './preview.js';
import { tablesShowCommand } from './show.js';

/** `gex tables list|show|preview|import|export|delete`: the project's Storage tables in any store. */
export function tablesCommand(yargs: Argv): Argv {
  return yargs.command(
    'tables <action>',
    "Inspect, import, export and delete the project's Storage tables (what gex run loads)",
    (y) =>
      withSubCommands(
        y
          .example('$0 tables list --store gex-store.sqlite', 'every table: id, rows, columns, last import')
          .example(
            '$0 tables preview in.c-shop.users --where-column country --where-values CZ,SK',
            'the first 100 matching rows as a text table',
          )
          .example(
            '$0 tables export in.c-shop.users --output users.csv',
            'users.csv (all values quoted) and users.csv.manifest',
          )
          .example('$0 tables delete --bucket in.c-shop --force', 'delete a bucket with its tables'),
        [
          tablesListCommand,
          tablesShowCommand,
          tablesPreviewCommand,
          tablesExportCommand,
          tablesImportCommand,
          tablesDeleteCommand,
        ],
      ).demandCommand(1),
  );
}
