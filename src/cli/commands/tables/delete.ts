import type { Argv } from 'yargs';
import { UserError } from '../../../common/errors.js';
import { displayId } from '../../../common/log-text.js';
import { plural } from '../../../common/text.js';
import { fields, print, say } from '../../store-commands/store-command.js';
import { tablesOptions, withTables } from './tables-options.js';
import { someIds } from './table-fields.js';

/** `gex tables delete [table-id]` */
export function tablesDeleteCommand(y: Argv): Argv {
  return y.command(
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
  );
}
