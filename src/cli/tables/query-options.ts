import type { Argv } from 'yargs';
import { UserError } from '../../common/errors.js';
import { quoteForLog } from '../../common/log-text.js';
import { MAX_WHERE_VALUES, parseChangedSince, type TableQuery } from '../../store/tables/index.js';

/** The filter options of `gex tables preview|export`, as the command line gives them. */
export interface QueryArgs {
  limit?: string;
  columns?: string[];
  'where-column'?: string;
  'where-values'?: string[];
  'where-value'?: string[];
  'where-operator': 'eq' | 'ne';
  'changed-since'?: string;
}

/** Longest option value quoted back in an error. */
const SHOWN = 100;

export function queryOptions<T>(y: Argv<T>, limitDescription: string): Argv<T & QueryArgs> {
  return (
    y
      .option('limit', { type: 'string', describe: limitDescription })
      .option('columns', {
        type: 'string',
        array: true,
        describe: 'only these columns, in this order (a comma list, or repeated)',
      })
      .option('where-column', {
        type: 'string',
        describe: 'only rows whose value in this column is (or with --where-operator ne: is not) one of --where-values',
      })
      .option('where-values', {
        type: 'string',
        array: true,
        describe: 'the values of --where-column (a comma list, or repeated)',
      })
      .option('where-value', {
        type: 'string',
        array: true,
        describe: 'one value of --where-column taken as it is, commas included (repeatable)',
      })
      .option('where-operator', {
        type: 'string',
        choices: ['eq', 'ne'] as const,
        default: 'eq' as const,
        describe: 'eq: the value is one of them; ne: it is none of them',
      })
      // nargs: a relative moment starts with "-" ("-2 days"), which is still this option's value
      .option('changed-since', {
        type: 'string',
        nargs: 1,
        describe: 'only rows changed since: a Unix timestamp, an ISO date (2025-01-31T12:00:00Z) or "-2 days"',
      })
  );
}

const commaList = (values: string[] | undefined): string[] => (values ?? []).flatMap((v) => String(v).split(','));

/** The query the options describe; `maxLimit` bounds --limit (a preview's 1000). */
export function queryFromArgs(args: QueryArgs, maxLimit?: number, now = new Date()): TableQuery {
  let limit: number | undefined;
  if (args.limit !== undefined) {
    const text = String(args.limit);
    const bound = maxLimit === undefined ? '' : ` up to ${maxLimit}`;
    if (!/^\d{1,15}$/.test(text))
      throw new UserError(
        'GEX_CLI_USAGE',
        `--limit takes a whole number of rows from 0${bound}, got ${quoteForLog(text.slice(0, SHOWN))}.`,
      );
    limit = Number(text);
    if (maxLimit !== undefined && limit > maxLimit)
      throw new UserError('GEX_CLI_USAGE', `--limit is at most ${maxLimit} here, got ${limit}.`);
  }
  const columns = commaList(args.columns).map((c) => c.trim());
  if (columns.some((c) => c === ''))
    throw new UserError(
      'GEX_CLI_USAGE',
      '--columns names an empty column: give column names separated by commas (a,b).',
    );
  const whereValues = [...commaList(args['where-values']), ...(args['where-value'] ?? []).map(String)];
  const whereColumn = args['where-column'];
  if (whereColumn === undefined && whereValues.length > 0)
    throw new UserError('GEX_CLI_USAGE', '--where-values needs --where-column: name the column to filter on.');
  if (whereColumn !== undefined && whereValues.length === 0)
    throw new UserError(
      'GEX_CLI_USAGE',
      '--where-column needs --where-values (or --where-value): the values to compare with.',
    );
  if (whereValues.length > MAX_WHERE_VALUES)
    throw new UserError(
      'GEX_CLI_USAGE',
      `--where-values lists ${whereValues.length} values; at most ${MAX_WHERE_VALUES} are allowed.`,
    );
  return {
    ...(limit === undefined ? {} : { limit }),
    ...(columns.length ? { columns } : {}),
    ...(whereColumn === undefined ? {} : { whereColumn, whereValues, whereOperator: args['where-operator'] }),
    ...(args['changed-since'] === undefined
      ? {}
      : { changedSince: parseChangedSince(String(args['changed-since']), now, '--changed-since') }),
  };
}
