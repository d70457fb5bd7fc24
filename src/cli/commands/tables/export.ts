import type { Argv } from 'yargs';
import { UserError } from '../../../common/errors.js';
import { displayId, displayText } from '../../../common/log-text.js';
import { unsafeFileNameProblem } from '../../../common/safe-path.js';
import { plural } from '../../../common/text.js';
import type { OpenedStore } from '../../../store/open-config-store.js';
import type { TableSource } from '../../../store/table-source.js';
import { fields, print, say } from '../../store-commands/store-command.js';
import { queryFromArgs, queryOptions } from '../../tables/query-options.js';
import { exportToFile, exportToStdout, sourceCsvWriter, type CsvWriter } from '../../tables/table-export.js';
import { tablesOptions, withTables } from './tables-options.js';

/**
 * How an export reads a table: a gex server writes it to a file with an export job (export-async,
 * downloaded streamed: any size); the embedded store reads it in batches; a Keboola stack through
 * data-preview (at most MAX_PREVIEW_ROWS rows: its files live in its cloud storage).
 */
async function csvWriterOf(opened: OpenedStore, source: TableSource): Promise<CsvWriter> {
  if (opened.kind !== 'remote' || (await opened.tableTransfer.fileStorageProvider()) !== 'gex')
    return sourceCsvWriter(source);
  const transfer = opened.tableTransfer;
  return async (tableId, query, out) => {
    const table = await source.table(tableId);
    const { rows } = await transfer.exportTable(tableId, query, out);
    return { rows, columns: query.columns && query.columns.length > 0 ? [...query.columns] : table.columns, table };
  };
}

/** `--output` unless given: `<table-id>.csv` in the current folder, when the id is a safe file name. */
function defaultOutput(tableId: string): string {
  const name = `${tableId}.csv`;
  const problem = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(name)
    ? 'it contains a control or invisible character'
    : unsafeFileNameProblem(name);
  if (problem || name.startsWith('.'))
    throw new UserError(
      'GEX_CLI_USAGE',
      `The table id ${displayId(tableId)} cannot name a file (${problem ?? 'it would be hidden'}): name one with --output.`,
    );
  return name;
}

/** `gex tables export <table-id>` */
export function tablesExportCommand(y: Argv): Argv {
  return y.command(
    'export <table-id>',
    "Write a table as Keboola's CSV (header, every value quoted) and its manifest (<file>.manifest), streamed",
    (c) =>
      queryOptions(
        tablesOptions(c).positional('table-id', {
          type: 'string',
          demandOption: true,
          describe: 'in.c-<bucket>.<table>',
        }),
        'rows to export at most (default: all)',
      )
        .option('output', {
          type: 'string',
          nargs: 1,
          describe: 'the CSV file (default <table-id>.csv here); "-" writes the CSV to stdout, without a manifest',
        })
        .option('force', { type: 'boolean', default: false, describe: 'replace an existing file and manifest' })
        .example('$0 tables export in.c-shop.users --output - | head', 'the CSV to stdout'),
    (args) =>
      withTables(args, async (source, _location, opened) => {
        const tableId = args['table-id'];
        const query = queryFromArgs(args);
        const write = await csvWriterOf(opened, source);
        if (args.output === '-') {
          await exportToStdout(write, tableId, query);
          return;
        }
        // the default file is named after the table: only once it is known to be one
        const file = args.output ?? defaultOutput((await source.table(tableId)).id);
        const result = await exportToFile(write, tableId, query, file, args.force);
        if (args.json)
          return print(
            fields({
              id: result.table.id,
              file,
              manifest: `${file}.manifest`,
              rows: result.rows,
              columns: result.columns,
            }),
          );
        say(
          `Exported ${plural(result.rows, 'row')} of table ${displayId(result.table.id)} to ${displayText(file)} (manifest ${displayText(`${file}.manifest`)}).`,
        );
      }),
  );
}
