import type { Argv } from 'yargs';
import { printList } from '../../output/list-output.js';
import { displayId, displayText } from '../../../common/log-text.js';
import { plural } from '../../../common/text.js';
import { print, say } from '../../store-commands/store-command.js';
import { tablesOptions, withTables } from './tables-options.js';
import { tableJson } from './table-fields.js';

/** `gex tables list` */
export function tablesListCommand(y: Argv): Argv {
  return y.command(
    'list',
    'List the tables: id, rows, columns, last import',
    (c) =>
      tablesOptions(c).option('bucket', {
        type: 'string',
        describe: 'only the tables of this bucket (in.c-…, out.c-…)',
      }),
    (args) =>
      withTables(args, async (source, location) => {
        const tables = await source.listTables(args.bucket);
        if (args.json) return print(tables.map(tableJson));
        if (tables.length === 0) {
          const where =
            args.bucket === undefined ? `the project of ${displayText(location)}` : `bucket ${displayId(args.bucket)}`;
          return say(
            `No tables in ${where}. "gex run --config-id <id>" loads each row's out/tables into the project's Storage tables.`,
          );
        }
        printList(
          ['TABLE', 'ROWS', 'COLUMNS', 'LAST IMPORT'],
          tables.map((t) => [
            displayId(t.id),
            plural(t.rowsCount, 'row'),
            plural(t.columns.length, 'column'),
            `last import ${displayText(t.lastImportDate)}`,
          ]),
        );
      }),
  );
}
