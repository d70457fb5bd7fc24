import type { Argv } from 'yargs';
import { displayId, displayText, quoteForLog } from '../../../common/log-text.js';
import type { MetadataItem } from '../../../store/tables/index.js';
import { print, say } from '../../store-commands/store-command.js';
import { tablesOptions, withTables } from './tables-options.js';
import { tableJson } from './table-fields.js';

/** A metadata item on one line: provider, key and value, made safe and cut. */
function metadataLine(m: MetadataItem): string {
  const value = m.value.length > 80 ? `${m.value.slice(0, 80)}…` : m.value;
  return `${displayId(m.provider)} ${displayId(m.key)} = ${quoteForLog(value)}`;
}

const names = (list: readonly string[]) => (list.length === 0 ? '(none)' : list.map(displayId).join(', '));

/** `gex tables show <table-id>` */
export function tablesShowCommand(y: Argv): Argv {
  return y.command(
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
        if (t.metadata.length > 0) say(`  metadata     ${t.metadata.map(metadataLine).join('\n               ')}`);
        for (const [column, items] of t.columnMetadata ?? [])
          say(`  column ${displayId(column)}: ${items.map(metadataLine).join('; ')}`);
      }),
  );
}
