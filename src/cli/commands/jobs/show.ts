import type { Argv } from 'yargs';
import { jobId } from '../../jobs/jobs-backend.js';
import { printJob } from '../../jobs/job-view.js';
import { out, handler, type JobsArgs } from './jobs-handler.js';

/** `gex jobs show <id>` */
export function jobsShowCommand(y: Argv<JobsArgs>): Argv<JobsArgs> {
  return y.command(
    'show <id>',
    'one job',
    (c) => c.positional('id', { type: 'string' }),
    handler(async (backend, args) => {
      printJob(await backend.get(jobId(args.id)), args.json, out);
      return 0;
    }),
  );
}
