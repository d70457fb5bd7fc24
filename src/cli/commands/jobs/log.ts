import type { Argv } from 'yargs';
import { jobId, type JobsBackend } from '../../jobs/jobs-backend.js';
import { logLine } from '../../jobs/job-view.js';
import { out, sleep, handler, type JobsArgs } from './jobs-handler.js';

async function printLog(backend: JobsBackend, id: string, follow: boolean): Promise<void> {
  let cursor: string | undefined;
  for (;;) {
    // the status first: a job that had ended by then has all its lines stored
    const job = await backend.get(id);
    const read = await backend.log(job, cursor);
    for (const line of read.lines) out(`${logLine(line)}\n`);
    cursor = read.cursor;
    if (!follow || job.isFinished) return;
    await sleep(backend.pollMs);
  }
}

/** `gex jobs log <id>` */
export function jobsLogCommand(y: Argv<JobsArgs>): Argv<JobsArgs> {
  return y.command(
    'log <id>',
    'the log lines of a job',
    (c) => c.positional('id', { type: 'string' }).option('follow', { type: 'boolean', default: false }),
    handler(async (backend, args) => {
      await printLog(backend, jobId(args.id), Boolean(args.follow));
      return 0;
    }),
  );
}
