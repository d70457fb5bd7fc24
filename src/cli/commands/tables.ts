import { stat } from 'node:fs/promises';
import type { Argv } from 'yargs';
import { printList } from '../output/list-output.js';
import { UserError } from '../../common/errors.js';
import { displayId, displayText, quoteForLog } from '../../common/log-text.js';
import { unsafeFileNameProblem } from '../../common/safe-path.js';
import { plural } from '../../common/text.js';
import { fromPlain, type JsonValue } from '../../json/index.js';
import type { OpenedStore } from '../../store/open-config-store.js';
import type { TableLoadTarget } from '../../store/table-load-target.js';
import { embeddedTableSource, type TableSource } from '../../store/table-source.js';
import { MAX_PREVIEW_ROWS, type MetadataItem, type TableDetail } from '../../store/tables/index.js';
import { runCliAction } from '../store-commands/command-runner.js';
import { fields, print, say } from '../store-commands/store-command.js';
import { openStoreFromArgs, storeOptions, type StoreArgs } from '../options/store-options.js';
import { previewGrid } from '../tables/preview-grid.js';
import { queryFromArgs, queryOptions } from '../tables/query-options.js';
import { exportToFile, exportToStdout, keboolaCsv, sourceCsvWriter, type CsvWriter } from '../tables/table-export.js';

interface TablesArgs extends StoreArgs {
  json: boolean;
}

const tablesOptions = <T>(y: Argv<T>) =>
  storeOptions(y).option('json', { type: 'boolean', default: false, describe: 'print JSON' }) as Argv<T & TablesArgs>;

/** Runs `work` with the tables of the store the arguments name: the embedded store's database, or a Storage API's table API. */
function withTables(
  args: StoreArgs,
  work: (tables: TableSource, location: string, opened: OpenedStore) => Promise<void>,
): Promise<void> {
  return runCliAction(async (logger) => {
    const opened = await openStoreFromArgs(args, logger, { mustExist: true });
    try {
      const source = opened.kind === 'remote' ? opened.remoteTables : embeddedTableSource(opened.tables);
      await work(source, opened.location, opened);
    } finally {
      await opened.close();
    }
  });
}

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

/** A table as `--json` prints it: the fields of Keboola's table detail that gex knows. */
function tableJson(t: TableDetail): JsonValue {
  return fields({
    id: t.id,
    name: t.name,
    bucket: fields({ id: t.bucketId, stage: t.bucketId.startsWith('out.') ? 'out' : 'in' }),
    columns: t.columns,
    primaryKey: t.primaryKey,
    rowsCount: t.rowsCount,
    created: t.created,
    lastImportDate: t.lastImportDate,
    lastChangeDate: t.lastChangeDate,
    metadata: fromPlain(t.metadata),
    ...(t.columnMetadata === null
      ? {}
      : { columnMetadata: new Map([...t.columnMetadata].map(([c, items]) => [c, fromPlain(items)])) }),
  });
}

/** A metadata item on one line: provider, key and value, made safe and cut. */
function metadataLine(m: MetadataItem): string {
  const value = m.value.length > 80 ? `${m.value.slice(0, 80)}…` : m.value;
  return `${displayId(m.provider)} ${displayId(m.key)} = ${quoteForLog(value)}`;
}

const names = (list: readonly string[]) => (list.length === 0 ? '(none)' : list.map(displayId).join(', '));

/** The first `n` ids of a list, then how many more. */
function someIds(ids: string[], n = 10): string {
  return ids.slice(0, n).map(displayId).join(', ') + (ids.length > n ? ` and ${ids.length - n} more` : '');
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

/** `gex tables list|show|preview|import|export|delete`: the project's Storage tables in any store. */
export function tablesCommand(yargs: Argv): Argv {
  return yargs.command(
    'tables <action>',
    "Inspect, import, export and delete the project's Storage tables (what gex run loads)",
    (y) =>
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
        .example('$0 tables delete --bucket in.c-shop --force', 'delete a bucket with its tables')
        .command(
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
                  args.bucket === undefined
                    ? `the project of ${displayText(location)}`
                    : `bucket ${displayId(args.bucket)}`;
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
        )
        .command(
          'show <table-id>',
          'Show a table: columns, primary key, rows, created, last import and last change',
          (c) =>
            tablesOptions(c).positional('table-id', {
              type: 'string',
              demandOption: true,
              describe: 'in.c-<bucket>.<table>',
            }),
          (args) =>
            withTables(args, async (source) => {
              const t = await source.table(args['table-id']);
              if (args.json) return print(tableJson(t));
              say(`Table ${displayId(t.id)}`);
              say(`  bucket       ${displayId(t.bucketId)}`);
              say(`  columns      ${names(t.columns)} (${t.columns.length})`);
              say(`  primary key  ${names(t.primaryKey)}`);
              say(`  rows         ${t.rowsCount}`);
              say(`  created      ${displayText(t.created)}`);
              say(`  last import  ${displayText(t.lastImportDate)}`);
              say(`  last change  ${t.lastChangeDate === null ? '(never)' : displayText(t.lastChangeDate)}`);
              if (t.metadata.length > 0)
                say(`  metadata     ${t.metadata.map(metadataLine).join('\n               ')}`);
              for (const [column, items] of t.columnMetadata ?? [])
                say(`  column ${displayId(column)}: ${items.map(metadataLine).join('; ')}`);
            }),
        )
        .command(
          'preview <table-id>',
          `Show the first rows of a table (100 unless --limit, at most ${MAX_PREVIEW_ROWS})`,
          (c) =>
            queryOptions(
              tablesOptions(c).positional('table-id', {
                type: 'string',
                demandOption: true,
                describe: 'in.c-<bucket>.<table>',
              }),
              `rows to show (default 100, at most ${MAX_PREVIEW_ROWS})`,
            )
              .option('format', {
                type: 'string',
                choices: ['text', 'csv', 'json'] as const,
                default: 'text' as const,
                describe:
                  "text: an aligned table (values made safe and cut); csv: Keboola's CSV; json: {columns, rows}",
              })
              .example(
                '$0 tables preview in.c-shop.users --columns id,name --changed-since "-2 days"',
                'two columns of the rows changed in the last two days',
              ),
          (args) =>
            withTables(args, async (source) => {
              const query = queryFromArgs(args, MAX_PREVIEW_ROWS);
              const { columns, rows } = await source.preview(args['table-id'], query);
              const format = args.json ? 'json' : args.format;
              if (format === 'json') return print(fields({ columns, rows }));
              if (format === 'csv') return void process.stdout.write(keboolaCsv([columns, ...rows]));
              for (const line of previewGrid(columns, rows)) say(line);
              const limit = query.limit ?? 100;
              say(
                rows.length === limit && limit < MAX_PREVIEW_ROWS
                  ? `(the first ${plural(rows.length, 'row')}; --limit shows up to ${MAX_PREVIEW_ROWS})`
                  : `(${plural(rows.length, 'row')})`,
              );
            }),
        )
        .command(
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
                describe:
                  'the CSV file (default <table-id>.csv here); "-" writes the CSV to stdout, without a manifest',
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
        )
        .command(
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
        )
        .command(
          'delete [table-id]',
          'Delete a table, or with --bucket a bucket (--force: with its tables); asks nothing',
          (c) =>
            tablesOptions(c)
              .positional('table-id', { type: 'string', describe: 'in.c-<bucket>.<table>' })
              .option('bucket', { type: 'string', describe: 'delete this bucket instead of a table' })
              .option('force', {
                type: 'boolean',
                default: false,
                describe: 'with --bucket: delete the bucket with its tables',
              }),
          (args) =>
            withTables(args, async (source) => {
              const tableId = args['table-id'];
              if ((tableId === undefined) === (args.bucket === undefined))
                throw new UserError(
                  'GEX_CLI_USAGE',
                  'Name what to delete: a table id, or --bucket <bucket-id> (one of them).',
                );
              if (tableId !== undefined) {
                await source.deleteTable(tableId);
                if (args.json) return print(fields({ tables: [tableId], bucket: null }));
                return say(`Deleted table ${displayId(tableId)}.`);
              }
              const bucketId = args.bucket!;
              const ids = (await source.listTables(bucketId)).map((t) => t.id);
              if (ids.length > 0 && !args.force) {
                throw new UserError(
                  'GEX_BUCKET_NOT_EMPTY',
                  `Bucket ${displayId(bucketId)} has ${plural(ids.length, 'table')} (${someIds(ids)}): add --force to delete the bucket with them.`,
                );
              }
              await source.deleteBucket(bucketId, ids.length > 0);
              if (args.json) return print(fields({ tables: ids, bucket: bucketId }));
              say(
                `Deleted bucket ${displayId(bucketId)}${ids.length ? ` with ${plural(ids.length, 'table')}: ${someIds(ids)}` : ''}.`,
              );
            }),
        )
        .demandCommand(1),
  );
}
