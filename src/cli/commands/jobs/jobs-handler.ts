import { exitCodeOf } from '../../../common/errors.js';
import { isRemoteStore, storeLocationFromArgs } from '../../../store/store-location.js';
import { createLogger } from '../../../common/logger.js';
import { withEmbeddedBackend } from '../../store-commands/embedded-only.js';
import { tokenFromArgs } from '../../options/store-options.js';
import { EmbeddedJobs, type JobsBackend } from '../../jobs/jobs-backend.js';

/** The options every `gex jobs` sub-command takes (the tree's). */
export interface JobsArgs {
  store?: string;
  token?: string;
  project?: string;
  json: boolean;
}

/** stdout, where `gex jobs` prints jobs and log lines */
export const out = (text: string) => void process.stdout.write(text);
/** `ms`, or until `signal` aborts */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

type Action = (backend: JobsBackend, args: JobsArgs & Record<string, unknown>) => Promise<number>;

/** The queue the arguments name: a server's Queue API (an http(s) store) or the embedded store's. */
async function withJobs(args: JobsArgs, work: (backend: JobsBackend) => Promise<number>): Promise<number> {
  const location = storeLocationFromArgs(args.store);
  if (isRemoteStore(location)) {
    const { openRemoteJobs } = await import('../../jobs/remote-jobs.js');
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
      const { openJobQueue } = await import('../../../jobs/job-queue.js');
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

/** A sub-command's handler: `action` on the queue the arguments name; its result is the exit code. */
export function handler(action: Action) {
  return async (args: JobsArgs & Record<string, unknown>) => {
    try {
      process.exitCode = await withJobs(args, (backend) => action(backend, args));
    } catch (error) {
      process.stderr.write(`${(error as Error).message}\n`);
      process.exitCode = exitCodeOf(error);
    }
  };
}
