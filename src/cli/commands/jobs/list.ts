import type { Argv } from 'yargs';
import { UserError } from '../../../common/errors.js';
import { stringifyExact } from '../../../json/index.js';
import { DEFAULT_SEARCH_LIMIT } from '../../../jobs/job-search.js';
import { isJobStatus, type JobStatus } from '../../../jobs/statuses.js';
import { splitIdList } from '../../options/id-list.js';
import { jobCells } from '../../jobs/job-view.js';
import { printList } from '../../output/list-output.js';
import { integerOption } from '../../options/option-checks.js';
import { out, handler, type JobsArgs } from './jobs-handler.js';

/** A run id as `--parent-run-id` takes it: numbers joined by dots (`123`, `123.456`). */
function parentRunId(text: unknown): string | undefined {
  if (text === undefined) return undefined;
  if (typeof text !== 'string' || !/^\d{1,15}(\.\d{1,15}){0,20}$/.test(text))
    throw new UserError('GEX_CLI_USAGE', `Not a run id: ${JSON.stringify(String(text).slice(0, 40))}`);
  return text;
}

/** `gex jobs list` */
export function jobsListCommand(y: Argv<JobsArgs>): Argv<JobsArgs> {
  return y.command(
    'list',
    'the newest jobs first',
    (c) =>
      c
        .option('status', { type: 'string', array: true, describe: 'only jobs in these statuses' })
        .option('config', { type: 'string', array: true, describe: 'only jobs of these configurations' })
        .option('parent-run-id', {
          type: 'string',
          describe: "only the jobs below this run: a flow's phases and tasks under its root's run id",
        })
        .option(
          'limit',
          integerOption('limit', { min: 1, max: 500, default: DEFAULT_SEARCH_LIMIT, describe: 'jobs to list' }),
        ),
    handler(async (backend, args) => {
      const statuses = (args.status as string[] | undefined)?.flatMap(splitIdList);
      const bad = statuses?.find((s) => !isJobStatus(s));
      if (bad !== undefined) throw new UserError('GEX_CLI_USAGE', `Unknown status ${JSON.stringify(bad)}`);
      const limit = Number(args.limit);
      const found = await backend.search({
        statuses: statuses as JobStatus[] | undefined,
        configIds: (args.config as string[] | undefined)?.flatMap(splitIdList),
        parentRunId: parentRunId(args['parent-run-id']),
        limit,
      });
      if (args.json) out(`${stringifyExact(found.map((j) => j.wire))}\n`);
      else printList(['ID', 'STATUS', 'CONFIGURATION', 'CREATED'], found.map(jobCells));
      return 0;
    }),
  );
}
