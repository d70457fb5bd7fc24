import type { Argv } from 'yargs';
import { jobId } from '../../jobs/jobs-backend.js';
import { printJob } from '../../jobs/job-view.js';
import { out, handler, type JobsArgs } from './jobs-handler.js';

/** `gex jobs kill <id>` */
export function jobsKillCommand(y: Argv<JobsArgs>): Argv<JobsArgs> {
  return y.command(
    'kill <id>',
    'cancel a waiting job or stop a running one',
    (c) => c.positional('id', { type: 'string' }),
    handler(async (backend, args) => {
      printJob(await backend.kill(jobId(args.id)), args.json, out);
      return 0;
    }),
  );
}
