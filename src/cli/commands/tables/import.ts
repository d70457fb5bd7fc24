import { stat } from 'node:fs/promises';
import type { Argv } from 'yargs';
import { UserError } from '../../../common/errors.js';
import { displayId, displayText } from '../../../common/log-text.js';
import { plural } from '../../../common/text.js';
import type { OpenedStore } from '../../../store/open-config-store.js';
import type { TableLoadTarget } from '../../../store/table-load-target.js';
import { fields, print, say } from '../../store-commands/store-command.js';
import { tablesOptions, withTables } from './tables-options.js';
import { someIds } from './table-fields.js';

/** Where `gex tables import` loads: the embedded store's tables, or a gex server's (a Keboola stack is refused). */
async function loadTargetOf(opened: OpenedStore): Promise<TableLoadTarget> {
  if (opened.kind !== 'remote') return opened.tables;
  const provider = await opened.tableTransfer.fileStorageProvider();
  if (provider !== 'gex')
    throw new UserError(
      'GEX_STORAGE_API_REFUSED',
      `The Storage API at ${displayText(opened.location)} keeps its files in ${provider ? `cloud storage (${displayId(provider)})` : 'storage it does not name'}, which gex does not write to: ` +
        'gex imports tables into a gex server or its store only.',
    );
  return opened.tableTransfer;
}

/** A file to import: a regular file that exists (named as given in messages). */
async function checkImportFile(file: string): Promise<void> {
  const found = await stat(file).catch(() => null);
  if (!found?.isFile())
    throw new UserError(
      'GEX_CLI_USAGE',
      `${displayText(file)} ${found ? 'is not a file' : 'does not exist'}: name the CSV file to import (a header row, then the rows).`,
    );
}

/** `gex tables import <file>` */
export function tablesImportCommand(y: Argv): Argv {
  return y.command(
    'import <file>',
    'Load a CSV file (a header row, then the rows) into a table, as gex run loads a table: created, replaced, or with --incremental added to',
    (c) =>
      tablesOptions(c)
        .positional('file', { type: 'string', demandOption: true, describe: 'the CSV file' })
        .option('table', {
          type: 'string',
          demandOption: true,
          nargs: 1,
          describe: 'the table: in.c-<bucket>.<table> (made, with its bucket, when missing)',
        })
        .option('incremental', {
          type: 'boolean',
          default: false,
          describe: 'add the rows (with a primary key: replace the rows of the same key); else replace the table',
        })
        .option('primary-key', {
          type: 'string',
          nargs: 1,
          describe: "the primary key's columns, comma-separated (a table that has one keeps it)",
        })
        .option('delimiter', { type: 'string', nargs: 1, default: ',', describe: "the file's delimiter" })
        .option('enclosure', { type: 'string', nargs: 1, default: '"', describe: "the file's enclosure" })
        .example(
          '$0 tables import users.csv --table in.c-shop.users --incremental --primary-key id',
          'upsert the rows of users.csv by id',
        ),
    (args) =>
      withTables(args, async (_source, _location, opened) => {
        await checkImportFile(args.file);
        const target = await loadTargetOf(opened);
        const primaryKey = (args['primary-key'] ?? '')
          .split(',')
          .map((k) => k.trim())
          .filter((k) => k !== '');
        const manifest = {
          destination: args.table,
          incremental: args.incremental,
          primary_key: primaryKey,
          delimiter: args.delimiter,
          enclosure: args.enclosure,
        };
        const result = await target.load(args.file, manifest);
        if (args.json)
          return print(
            fields({
              id: result.tableId,
              rows: result.rowsInFile,
              created: result.tableCreated,
              columnsAdded: result.columnsAdded,
            }),
          );
        say(
          `Loaded ${plural(result.rowsInFile, 'row')} into table ${displayId(result.tableId)} ` +
            `(${result.tableCreated ? 'created' : args.incremental ? 'incremental' : 'replaced'}` +
            `${result.columnsAdded.length > 0 ? `; new columns ${someIds(result.columnsAdded)}` : ''}).`,
        );
      }),
  );
}
