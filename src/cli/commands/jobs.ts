import type { Argv } from 'yargs';
import { signalExitCode, type RunCancelled } from '../../common/cancellation.js';
import { exitCodeOf, UserError } from '../../common/errors.js';
import { displayText } from '../../common/log-text.js';
import { stringifyExact } from '../../json/index.js';
import { DEFAULT_SEARCH_LIMIT } from '../../jobs/job-search.js';
import { isJobStatus, type JobStatus } from '../../jobs/statuses.js';
import { isRemoteStore, storeLocationFromArgs } from '../../store/store-location.js';
import { GENERIC_EXTRACTOR_ID } from '../builtin-components.js';
import { createLogger } from '../../common/logger.js';
import { withEmbeddedBackend } from '../store-commands/embedded-only.js';
import { tokenFromArgs } from '../options/store-options.js';
import { splitIdList } from '../options/id-list.js';
import { EmbeddedJobs, jobId, type JobsBackend } from '../jobs/jobs-backend.js';
import { exitCodeOfJob, jobCells, logLine, printJob, type JobView } from '../jobs/job-view.js';
import { printList } from '../output/list-output.js';
import { cancelOnStop } from '../process/stop-signals.js';
import { WaitProgress } from '../jobs/wait-progress.js';
import { integerOption } from '../options/option-checks.js';

interface JobsArgs {
  store?: string;
  token?: string;
  project?: string;
  json: boolean;
}

const out = (text: string) => void process.stdout.write(text);
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

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

type Action = (backend: JobsBackend, args: JobsArgs & Record<string, unknown>) => Promise<number>;

/** The queue the arguments name: a server's Queue API (an http(s) store) or the embedded store's. */
async function withJobs(args: JobsArgs, work: (backend: JobsBackend) => Promise<number>): Promise<number> {
  const location = storeLocationFromArgs(args.store);
  if (isRemoteStore(location)) {
    const { openRemoteJobs } = await import('../jobs/remote-jobs.js');
    return work(await openRemoteJobs(location, tokenFromArgs(args), process.env));
  }
  return withEmbeddedBackend(
    args.store,
    'gex jobs',
    async (backend) => {
      const store = await backend.localSession(args.project);
      const token = await store.verifyToken();
      // the store's queue with its dispatch (PostgreSQL: pg-boss), so a job created here reaches every worker;
      // only a dispatch problem is logged (the job is then sent by a server's or worker's next check)
      const { openJobQueue } = await import('../../jobs/job-queue.js');
      const queue = await openJobQueue(backend, { logger: createLogger({ level: 'warn' }) });
      try {
        return await work(new EmbeddedJobs(queue.jobs, store, token, queue));
      } finally {
        await queue.close();
      }
    },
    { mustExist: true },
  );
}

function handler(action: Action) {
  return async (args: JobsArgs & Record<string, unknown>) => {
    try {
      process.exitCode = await withJobs(args, (backend) => action(backend, args));
    } catch (error) {
      process.stderr.write(`${(error as Error).message}\n`);
      process.exitCode = exitCodeOf(error);
    }
  };
}

/**
 * `gex jobs run|list|show|log|kill`: the queue jobs of a project, on the embedded store or through a
 * server's Queue API (an http(s) store), with the same output and exit codes (docs/jobs.md).
 */
export function jobsCommand(yargs: Argv): Argv {
  return yargs.command(
    'jobs <action>',
    'Queue jobs: run a configuration on request, list, show, follow and kill jobs (docs/jobs.md)',
    (y) =>
      y
        .option('store', {
          type: 'string',
          describe:
            'the embedded store (a SQLite file or a postgres:// URL) or the http(s) address of a gex serve or Keboola stack ($KBC_URL, else $GEX_STORE, else gex-store.sqlite)',
        })
        .option('token', { type: 'string', describe: 'Storage API token for a server ($KBC_TOKEN)' })
        .option('project', { type: 'string', describe: 'project of the embedded store (default: "default")' })
        .option('json', { type: 'boolean', default: false, describe: "print jobs as the Queue API's JSON" })
        .command(
          'run <config-id>',
          'queue a job for a stored configuration (a `gex serve --workers N` on the store runs it)',
          (c) =>
            c
              .positional('config-id', { type: 'string', demandOption: true })
              .option('component-id', { type: 'string', default: GENERIC_EXTRACTOR_ID })
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
                  'wait until the job ends; exit with its code (0 ok, 1 user error, 2 application error, 143 killed)',
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
            return exitCodeOfJob(ended);
          }),
        )
        .command(
          'list',
          'the newest jobs first',
          (c) =>
            c
              .option('status', { type: 'string', array: true, describe: 'only jobs in these statuses' })
              .option('config', { type: 'string', array: true, describe: 'only jobs of these configurations' })
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
              limit,
            });
            if (args.json) out(`${stringifyExact(found.map((j) => j.wire))}\n`);
            else printList(['ID', 'STATUS', 'CONFIGURATION', 'CREATED'], found.map(jobCells));
            return 0;
          }),
        )
        .command(
          'show <id>',
          'one job',
          (c) => c.positional('id', { type: 'string' }),
          handler(async (backend, args) => {
            printJob(await backend.get(jobId(args.id)), args.json, out);
            return 0;
          }),
        )
        .command(
          'log <id>',
          'the log lines of a job',
          (c) => c.positional('id', { type: 'string' }).option('follow', { type: 'boolean', default: false }),
          handler(async (backend, args) => {
            await printLog(backend, jobId(args.id), Boolean(args.follow));
            return 0;
          }),
        )
        .command(
          'kill <id>',
          'cancel a waiting job or stop a running one',
          (c) => c.positional('id', { type: 'string' }),
          handler(async (backend, args) => {
            printJob(await backend.kill(jobId(args.id)), args.json, out);
            return 0;
          }),
        )
        .demandCommand(1, 'Name an action: run, list, show, log or kill'),
  );
}
