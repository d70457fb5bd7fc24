import { UserError } from '../../common/errors.js';
import type { QueueJob } from '../../jobs/job-record.js';
import type { JobQueue } from '../../jobs/job-queue.js';
import type { JobRepository } from '../../jobs/job-repository.js';
import { noWorkerAdvice } from '../../jobs/worker-registry.js';
import { jobToWire, wireTime } from '../../jobs/job-wire.js';
import type { JobStatus } from '../../jobs/statuses.js';
import type { EmbeddedConfigStore } from '../../store/embedded/embedded-config-store.js';
import type { TokenInfo } from '../../store/types.js';
import { jobView, type JobView, type LogLine } from './job-view.js';

/** What `gex jobs run` asks for. */
export interface JobRequest {
  componentId: string;
  configId: string;
  mode: 'run' | 'forceRun';
  configRowIds: string[];
  /** `X-KBC-RunId` (KBC_RUNID): the job's run id becomes `<parent>.<id>` */
  parentRunId?: string;
}

export interface JobFilter {
  statuses?: JobStatus[];
  configIds?: string[];
  /** the jobs below this run (its children and theirs): a flow's tree under its root's run id */
  parentRunId?: string;
  limit: number;
  /** jobs to skip (0 when absent) */
  offset?: number;
  /** oldest first (by id); newest first when absent */
  oldestFirst?: boolean;
}

/**
 * The queue `gex jobs` talks to: the embedded store's repository or a server's Queue API. Both
 * answer with the Queue API's job object, so that one set of printers serves both.
 */
export interface JobsBackend {
  /** how long to wait between two looks at a job (`--wait`, `log --follow`) */
  readonly pollMs: number;
  create(request: JobRequest): Promise<JobView>;
  /** the job; GEX_JOB_NOT_FOUND when the project has none with this id */
  get(id: string): Promise<JobView>;
  search(filter: JobFilter): Promise<JobView[]>;
  kill(id: string): Promise<JobView>;
  /** the job's log lines after `cursor` (all of them without), oldest first, and the cursor after them */
  log(job: JobView, cursor: string | undefined): Promise<{ lines: LogLine[]; cursor: string | undefined }>;
  /** the job's newest log line */
  newestLine(job: JobView): Promise<LogLine | undefined>;
  /**
   * What to do when nothing runs the store's jobs (no worker pool of the store is registered with
   * a worker), null when something does; absent where it cannot be known (a server's API).
   */
  workerAdvice?(): Promise<string | null>;
}

export function notFound(id: string, cause?: Error): UserError {
  return new UserError('GEX_JOB_NOT_FOUND', `Job ${JSON.stringify(id.slice(0, 40))} not found`, { cause });
}

/** A job id as the CLI takes it: digits only. */
export function jobId(text: unknown): string {
  if (typeof text !== 'string' && typeof text !== 'number') throw new UserError('GEX_CLI_USAGE', 'Name a job id');
  if (!/^\d{1,15}$/.test(String(text)))
    throw new UserError('GEX_CLI_USAGE', `Not a job id: ${JSON.stringify(String(text).slice(0, 40))}`);
  return String(text);
}

/** lines read at once (a job's whole log is bounded: LOG_LIMITS) */
const LOG_PAGE = 1000;

/** The embedded store's queue of one project (as its token). */
export class EmbeddedJobs implements JobsBackend {
  readonly pollMs = 500;

  constructor(
    private readonly jobs: JobRepository,
    private readonly store: EmbeddedConfigStore,
    private readonly token: TokenInfo,
    /** who runs the store's jobs */
    private readonly queue?: Pick<JobQueue, 'registry' | 'scope'>,
  ) {}

  async workerAdvice(): Promise<string | null> {
    if (!this.queue) return null;
    return (await this.queue.registry.capacity()) > 0 ? null : noWorkerAdvice(this.queue.scope);
  }

  private view(job: QueueJob): JobView {
    return jobView(jobToWire(job, ''))!;
  }

  async create(request: JobRequest): Promise<JobView> {
    const { newJob } = await import('../../jobs/job-request.js');
    const target = { ...request, parentRunId: request.parentRunId?.trim() };
    const job = await newJob(target, { ...this.token, readOnly: false }, this.store);
    return this.view(await this.jobs.create(job));
  }

  async get(id: string): Promise<JobView> {
    const job = await this.jobs.get(this.token.projectId, Number(id));
    if (!job) throw notFound(id);
    return this.view(job);
  }

  async search(filter: JobFilter): Promise<JobView[]> {
    const found = await this.jobs.search(this.token.projectId, {
      statuses: filter.statuses,
      configIds: filter.configIds,
      parentRunId: filter.parentRunId,
      limit: filter.limit,
      offset: filter.offset ?? 0,
      sortBy: 'id',
      sortOrder: filter.oldestFirst ? 'asc' : 'desc',
    });
    return found.map((job) => this.view(job));
  }

  async kill(id: string): Promise<JobView> {
    const job = await this.jobs.kill(this.token.projectId, Number(id));
    if (!job) throw notFound(id);
    return this.view(job);
  }

  async log(job: JobView, cursor: string | undefined): Promise<{ lines: LogLine[]; cursor: string | undefined }> {
    const lines: LogLine[] = [];
    let seq = cursor === undefined ? 0 : Number(cursor);
    for (;;) {
      const page = await this.jobs.events(this.token.projectId, {
        jobId: Number(job.id),
        sinceSeq: seq,
        limit: LOG_PAGE,
      });
      for (const e of page) lines.push({ created: wireTime(e.created) ?? '', level: e.level, message: e.message });
      if (page.length) seq = page[page.length - 1].seq;
      if (page.length < LOG_PAGE) return { lines, cursor: String(seq) };
    }
  }

  async newestLine(job: JobView): Promise<LogLine | undefined> {
    const [e] = await this.jobs.events(this.token.projectId, { jobId: Number(job.id), newestFirst: true, limit: 1 });
    return e && { created: wireTime(e.created) ?? '', level: e.level, message: e.message };
  }
}
