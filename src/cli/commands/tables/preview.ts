import type { Argv } from 'yargs';
import { plural } from '../../../common/text.js';
import { MAX_PREVIEW_ROWS } from '../../../store/tables/index.js';
import { fields, print, say } from '../../store-commands/store-command.js';
import { previewGrid } from '../../tables/preview-grid.js';
import { queryFromArgs, queryOptions } from '../../tables/query-options.js';
import { keboolaCsv } from '../../tables/table-export.js';
import { tablesOptions, withTables } from './tables-options.js';

/** `gex tables preview <table-id>` */
export function tablesPreviewCommand(y: Argv): Argv {
  return y.command(
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
          describe: "text: an aligned table (values made safe and cut); csv: Keboola's CSV; json: {columns, rows}",
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
  );
}
