import type { Argv } from 'yargs';
import { signalExitCode, type RunCancelled } from '../../../common/cancellation.js';
import { displayText } from '../../../common/log-text.js';
import { GENERIC_EXTRACTOR_ID } from '../../builtin-components.js';
import { splitIdList } from '../../options/id-list.js';
import type { JobsBackend } from '../../jobs/jobs-backend.js';
import { isFlowRoot, printTree } from '../../jobs/flow-tree.js';
import { exitCodeOfJob, printJob, type JobView } from '../../jobs/job-view.js';
import { cancelOnStop } from '../../process/stop-signals.js';
import { WaitProgress } from '../../jobs/wait-progress.js';
import { out, sleep, handler, type JobsArgs } from './jobs-handler.js';

/**
 * Polls the job until it ends, telling a person on stderr how it goes; undefined when a stop
 * signal (Ctrl-C) ended the wait — the job is not stopped by that, and stderr says how to.
 */
async function waitFor(backend: JobsBackend, id: string): Promise<JobView | undefined> {
  const progress = new WaitProgress((line) => process.stderr.write(`${line}\n`));
  const stop = cancelOnStop();
  let job: JobView | undefined;
  for (;;) {
    if (stop.aborted) {
      const status = job ? ` (${displayText(job.status)})` : '';
      process.stderr.write(
        `Stopped waiting: job ${id}${status} keeps running. Follow it with "gex jobs log ${id} --follow"; stop it with "gex jobs kill ${id}" (with the same --store).\n`,
      );
      return undefined;
    }
    job = await backend.get(id);
    const seen = job;
    await progress.seen(
      seen,
      async () => (await backend.newestLine(seen))?.message,
      backend.workerAdvice?.bind(backend),
    );
    if (job.isFinished) return job;
    await sleep(backend.pollMs, stop);
  }
}

/** What stderr says of a job that ended `warning` (exit 0, yet something failed). */
function warningLine(job: JobView): string {
  const what = isFlowRoot(job) ? 'The flow' : `Job ${job.id}`;
  return `${what} ended with a warning${job.message ? `: ${displayText(job.message)}` : '.'}`;
}

/** `gex jobs run <config-id>` */
export function jobsRunCommand(y: Argv<JobsArgs>): Argv<JobsArgs> {
  return y.command(
    'run <config-id>',
    'queue a job for a stored configuration (a `gex serve --workers N` on the store runs it)',
    (c) =>
      c
        .positional('config-id', { type: 'string', demandOption: true })
        .option('component-id', {
          type: 'string',
          alias: 'component',
          default: GENERIC_EXTRACTOR_ID,
          describe: 'component of the configuration (keboola.orchestrator or keboola.flow: a flow)',
        })
        .option('row-id', {
          type: 'string',
          array: true,
          default: [],
          coerce: splitIdList,
          describe: 'run only these rows (a comma list or repeated)',
        })
        .option('force', {
          type: 'boolean',
          default: false,
          describe: 'run a disabled configuration (mode forceRun)',
        })
        .option('wait', {
          type: 'boolean',
          default: false,
          describe:
            'wait until the job ends; exit with its code (0 ok or warning, 1 user error, 2 application error, 143 killed)',
        }),
    handler(async (backend, args) => {
      const job = await backend.create({
        componentId: String(args['component-id']),
        configId: String(args['config-id']),
        mode: args.force ? 'forceRun' : 'run',
        configRowIds: (args['row-id'] as string[]).map(String),
        parentRunId: process.env.KBC_RUNID || undefined,
      });
      printJob(job, args.json, out);
      if (!args.wait) return 0;
      const ended = await waitFor(backend, job.id);
      if (!ended) return signalExitCode((cancelOnStop().reason as RunCancelled).signal);
      printJob(ended, args.json, out);
      if (!args.json) await printTree(backend, ended, out);
      if (ended.status === 'warning') process.stderr.write(`${warningLine(ended)}\n`);
      return exitCodeOfJob(ended);
    }),
  );
}
