import type { Argv } from 'yargs';
import { exitCodeOf, UserError } from '../../common/errors.js';
import { stringifyExact } from '../../json/index.js';
import type { QueueJob } from '../../jobs/job-record.js';
import type { JobRepository } from '../../jobs/job-repository.js';
import { DEFAULT_SEARCH_LIMIT } from '../../jobs/job-search.js';
import { jobToWire } from '../../jobs/job-wire.js';
import { isFinished, isJobStatus, type JobStatus } from '../../jobs/statuses.js';
import type { EmbeddedBackend } from '../../store/embedded/embedded-backend.js';
import { splitIdList } from '../id-list.js';
import { withEmbeddedBackend } from '../embedded-only.js';
import { GENERIC_EXTRACTOR_ID } from '../builtin-components.js';
import { createLogger } from '../../common/logger.js';

interface JobsArgs {
  store?: string;
  project?: string;
  json: boolean;
}

const REFUSAL = 'gex jobs works on the embedded store (against a server: use its Queue API)';
/** how often `--wait` and `log --follow` look again */
const POLL_MS = 500;

/** The project's queue (with the store's dispatch: a job created here reaches every worker) and local identity. */
async function projectQueue(backend: EmbeddedBackend, args: JobsArgs) {
  const store = await backend.localSession(args.project);
  const token = await store.verifyToken();
  const { openJobQueue } = await import('../../jobs/job-queue.js');
  // only a dispatch problem is logged (the job is then sent by a server's or worker's next check)
  const queue = await openJobQueue(backend, { logger: createLogger({ level: 'warn' }) });
  closing.push(() => queue.close());
  return { jobs: queue.jobs, store, token };
}

/** what the action opened, closed when it ends */
const closing: Array<() => Promise<void>> = [];

function jobId(text: unknown): number {
  if (typeof text !== 'string' && typeof text !== 'number') throw new UserError('GEX_CLI_USAGE', 'Name a job id');
  if (!/^\d{1,15}$/.test(String(text)))
    throw new UserError('GEX_CLI_USAGE', `Not a job id: ${JSON.stringify(String(text).slice(0, 40))}`);
  return Number(text);
}

function line(job: QueueJob): string {
  const rows = job.configRowIds.length ? ` rows ${job.configRowIds.join(',')}` : '';
  const took = job.durationSeconds === null ? '' : ` ${job.durationSeconds}s`;
  return `${job.id}\t${job.status}\t${job.componentId} ${job.configId}${rows}\t${job.created}${took}`;
}

function show(job: QueueJob, json: boolean): void {
  if (json) return void process.stdout.write(`${stringifyExact(jobToWire(job, ''))}\n`);
  process.stdout.write(`${line(job)}\n`);
  if (job.result) process.stdout.write(`  ${job.result.message}\n`);
}

/** 0 success, 1 a user error, 2 an application error, 143 killed or cancelled */
export function exitCodeOfJob(job: QueueJob): number {
  if (job.status === 'success' || job.status === 'warning') return 0;
  if (job.status === 'terminated' || job.status === 'cancelled') return 143;
  return job.result?.error?.type === 'user' ? 1 : 2;
}

async function waitFor(jobs: JobRepository, projectId: number, id: number): Promise<QueueJob> {
  let last: JobStatus | undefined;
  for (;;) {
    const job = await jobs.get(projectId, id);
    if (!job) throw new UserError('GEX_JOB_NOT_FOUND', `Job ${id} not found`);
    if (job.status !== last) process.stderr.write(`Job ${id}: ${job.status}\n`);
    last = job.status;
    if (isFinished(job.status)) return job;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function printLog(jobs: JobRepository, projectId: number, id: number, follow: boolean): Promise<void> {
  let seq = 0;
  for (;;) {
    const events = await jobs.events(projectId, { jobId: id, sinceSeq: seq, limit: 1000 });
    for (const e of events) process.stdout.write(`${e.created} ${e.level.toUpperCase()} ${e.message}\n`);
    if (events.length) seq = events[events.length - 1].seq;
    if (events.length === 1000) continue;
    const job = await jobs.get(projectId, id);
    if (!job) throw new UserError('GEX_JOB_NOT_FOUND', `Job ${id} not found`);
    if (!follow || isFinished(job.status)) return;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

type Action = (backend: EmbeddedBackend, args: JobsArgs & Record<string, unknown>) => Promise<number>;

function handler(action: Action) {
  return async (args: JobsArgs & Record<string, unknown>) => {
    try {
      process.exitCode = await withEmbeddedBackend(
        args.store,
        REFUSAL,
        async (backend) => {
          try {
            return await action(backend, args);
          } finally {
            for (const close of closing.splice(0)) await close();
          }
        },
        { mustExist: true },
      );
    } catch (error) {
      process.stderr.write(`${(error as Error).message}\n`);
      process.exitCode = exitCodeOf(error);
    }
  };
}

/** `gex jobs run|list|show|log|kill`: the queue jobs of a project of the embedded store (docs/jobs.md). */
export function jobsCommand(yargs: Argv): Argv {
  return yargs.command(
    'jobs <action>',
    'Queue jobs: run a configuration on request, list, show, follow and kill jobs (docs/jobs.md)',
    (y) =>
      y
        .option('store', {
          type: 'string',
          describe: 'the embedded store (a SQLite file or a postgres:// URL; else $GEX_STORE or gex-store.sqlite)',
        })
        .option('project', { type: 'string', describe: 'project of the embedded store (default: "default")' })
        .option('json', { type: 'boolean', default: false, describe: "print jobs as the Queue API's JSON" })
        .command(
          'run <config-id>',
          'queue a job for a stored configuration (a `gex serve --workers N` on the same store runs it)',
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
            const { jobs, store, token } = await projectQueue(backend, args);
            const { newJobFromRequest } = await import('../../jobs/job-request.js');
            const body = new Map<string, import('../../json/index.js').JsonValue>([
              ['component', String(args['component-id'])],
              ['config', String(args['config-id'])],
              ['mode', args.force ? 'forceRun' : 'run'],
              ['configRowIds', (args['row-id'] as string[]).map(String)],
            ]);
            let job = await jobs.create(
              await newJobFromRequest(body, process.env.KBC_RUNID, { ...token, readOnly: false }, store),
            );
            show(job, args.json);
            if (!args.wait) return 0;
            job = await waitFor(jobs, token.projectId, job.id);
            show(job, args.json);
            return exitCodeOfJob(job);
          }),
        )
        .command(
          'list',
          'the newest jobs first',
          (c) =>
            c
              .option('status', { type: 'string', array: true, describe: 'only jobs in these statuses' })
              .option('config', { type: 'string', array: true, describe: 'only jobs of these configurations' })
              .option('limit', { type: 'number', default: DEFAULT_SEARCH_LIMIT }),
          handler(async (backend, args) => {
            const { jobs, token } = await projectQueue(backend, args);
            const statuses = (args.status as string[] | undefined)?.flatMap(splitIdList);
            const bad = statuses?.find((s) => !isJobStatus(s));
            if (bad !== undefined) throw new UserError('GEX_CLI_USAGE', `Unknown status ${JSON.stringify(bad)}`);
            const limit = Number(args.limit);
            if (!Number.isSafeInteger(limit) || limit < 1 || limit > 500)
              throw new UserError('GEX_CLI_USAGE', '--limit takes 1 to 500');
            const found = await jobs.search(token.projectId, {
              statuses: statuses as JobStatus[] | undefined,
              configIds: (args.config as string[] | undefined)?.flatMap(splitIdList),
              limit,
              offset: 0,
              sortBy: 'id',
              sortOrder: 'desc',
            });
            if (args.json) process.stdout.write(`${stringifyExact(found.map((j) => jobToWire(j, '')))}\n`);
            else for (const job of found) process.stdout.write(`${line(job)}\n`);
            return 0;
          }),
        )
        .command(
          'show <id>',
          'one job',
          (c) => c.positional('id', { type: 'string' }),
          handler(async (backend, args) => {
            const { jobs, token } = await projectQueue(backend, args);
            const job = await jobs.get(token.projectId, jobId(args.id));
            if (!job) throw new UserError('GEX_JOB_NOT_FOUND', `Job ${String(args.id)} not found`);
            show(job, args.json);
            return 0;
          }),
        )
        .command(
          'log <id>',
          'the log lines of a job',
          (c) => c.positional('id', { type: 'string' }).option('follow', { type: 'boolean', default: false }),
          handler(async (backend, args) => {
            const { jobs, token } = await projectQueue(backend, args);
            await printLog(jobs, token.projectId, jobId(args.id), Boolean(args.follow));
            return 0;
          }),
        )
        .command(
          'kill <id>',
          'cancel a waiting job or stop a running one',
          (c) => c.positional('id', { type: 'string' }),
          handler(async (backend, args) => {
            const { jobs, token } = await projectQueue(backend, args);
            const job = await jobs.kill(token.projectId, jobId(args.id));
            if (!job) throw new UserError('GEX_JOB_NOT_FOUND', `Job ${String(args.id)} not found`);
            show(job, args.json);
            return 0;
          }),
        )
        .demandCommand(1, 'Name an action: run, list, show, log or kill'),
  );
}
