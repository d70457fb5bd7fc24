import type { Argv } from 'yargs';
import { jobId } from '../../jobs/jobs-backend.js';
import { printTree } from '../../jobs/flow-tree.js';
import { printJob } from '../../jobs/job-view.js';
import { out, handler, type JobsArgs } from './jobs-handler.js';

/** `gex jobs show <id>` */
export function jobsShowCommand(y: Argv<JobsArgs>): Argv<JobsArgs> {
  return y.command(
    'show <id>',
    "one job; a flow's root job with its phases and tasks (--json: the job object only)",
    (c) => c.positional('id', { type: 'string' }),
    handler(async (backend, args) => {
      const job = await backend.get(jobId(args.id));
      printJob(job, args.json, out);
      if (!args.json) await printTree(backend, job, out);
      return 0;
    }),
  );
}
