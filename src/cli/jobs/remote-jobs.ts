import { UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import type { JsonObject, JsonValue } from '../../json/index.js';
import type { GivenToken } from '../../store/remote/api-index.js';
import { QueueApiClient, type RunEvent } from '../../store/remote/queue-api-client.js';
import { StoreError } from '../../store/store-error.js';
import { notFound, type JobFilter, type JobRequest, type JobsBackend } from './jobs-backend.js';
import { jobView, type JobView, type LogLine } from './job-view.js';

/** `gex jobs` on a server's Job Queue API (store/remote/queue-api-client.ts). */
export async function openRemoteJobs(
  url: string,
  token: GivenToken,
  env: NodeJS.ProcessEnv,
  logger?: Logger,
): Promise<JobsBackend> {
  return new RemoteJobs(await QueueApiClient.open(url, token, env, logger));
}

class RemoteJobs implements JobsBackend {
  readonly pollMs = 1000;

  constructor(private readonly api: QueueApiClient) {}

  private job(value: JsonValue, what: string): JobView {
    const view = jobView(value);
    if (!view) throw new UserError('GEX_STORAGE_API_REFUSED', `The Job Queue API answered ${what} with no job object.`);
    return view;
  }

  /** A 404 of a job call: that job is not the project's. */
  private async one(id: string, what: string, call: () => Promise<JsonValue>): Promise<JobView> {
    try {
      return this.job(await call(), what);
    } catch (error) {
      if (error instanceof StoreError && error.status === 404) throw notFound(id, error);
      throw error;
    }
  }

  async create(request: JobRequest): Promise<JobView> {
    const body: JsonObject = new Map<string, JsonValue>([
      ['component', request.componentId],
      ['config', request.configId],
      ['mode', request.mode],
      ['configRowIds', request.configRowIds],
    ]);
    return this.job(await this.api.createJob(body, request.parentRunId), 'POST /jobs');
  }

  get(id: string): Promise<JobView> {
    return this.one(id, `GET /jobs/${id}`, () => this.api.getJob(id));
  }

  async search(filter: JobFilter): Promise<JobView[]> {
    const query = new URLSearchParams({
      limit: String(filter.limit),
      sortBy: 'id',
      sortOrder: filter.oldestFirst ? 'asc' : 'desc',
    });
    if (filter.offset) query.set('offset', String(filter.offset));
    if (filter.parentRunId !== undefined) query.set('parentRunId', filter.parentRunId);
    for (const status of filter.statuses ?? []) query.append('status[]', status);
    for (const config of filter.configIds ?? []) query.append('config[]', config);
    return (await this.api.searchJobs(query)).map((j) => this.job(j, 'GET /search/jobs'));
  }

  kill(id: string): Promise<JobView> {
    return this.one(id, `POST /jobs/${id}/kill`, () => this.api.killJob(id));
  }

  async log(job: JobView, cursor: string | undefined): Promise<{ lines: LogLine[]; cursor: string | undefined }> {
    const since = cursor === undefined ? undefined : Number(cursor);
    const found = await this.api.runEventsAfter(job.runId, since);
    const newest = found.length ? found[found.length - 1].id : since;
    const lines = found.filter((e) => ofJob(e, job)).map((e) => e.line);
    return { lines, cursor: newest === undefined ? undefined : String(newest) };
  }

  async newestLine(job: JobView): Promise<LogLine | undefined> {
    // a child run's lines come too: the newest of this job's among a few
    return (await this.api.runEvents(job.runId, 20)).find((e) => ofJob(e, job))?.line;
  }
}

/** gex's events name their job (a child run's lines come with the run's); Keboola's may not, and are kept. */
function ofJob(event: RunEvent, job: JobView): boolean {
  return event.jobId === '' || event.jobId === job.id;
}
