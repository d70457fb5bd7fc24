import { UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../json/index.js';
import type { StorageApiClient, QueryParams } from '../../store/remote/storage-api-client.js';
import { openService } from '../remote-service.js';
import type { GivenToken } from '../store-options.js';
import { StoreError } from '../../store/store-error.js';
import { notFound, type JobFilter, type JobRequest, type JobsBackend } from './jobs-backend.js';
import { jobView, type JobView, type LogLine } from './job-view.js';

/** Answers larger than these are refused, not held in memory. */
const MAX_JOBS_BYTES = 16 * 1024 * 1024;
/** events per request: the events route's maximum (a page is at most ~9 MB: lines are at most 8 KiB) */
const EVENTS_PAGE = 1000;
const MAX_EVENTS_BYTES = 16 * 1024 * 1024;
/** lines of one read of a log: a job keeps at most 5,001; a server that sends more is not followed further */
const MAX_LOG_LINES = 20_000;
const NOT_SENT = 'far more than a job list or log takes: not read';
const JOBS_LIMIT = { maxBytes: MAX_JOBS_BYTES, tooLargeHint: NOT_SENT };
const EVENTS_LIMIT = { maxBytes: MAX_EVENTS_BYTES, tooLargeHint: NOT_SENT };
const LEVELS: Record<string, string> = { info: 'info', warn: 'warning', warning: 'warning', error: 'error' };

/**
 * The Job Queue of a Storage API (gex serve or a Keboola stack), found as Keboola's clients find
 * it: the `queue` entry of `services` in the API index. Both APIs go through StorageApiClient
 * (the token header, error mapping, retries, size limits); only GETs are retried — a POST whose
 * answer was lost may have queued or killed the job already.
 */
export async function openRemoteJobs(
  url: string,
  token: GivenToken,
  env: NodeJS.ProcessEnv,
  logger?: Logger,
): Promise<JobsBackend> {
  const { storage, service } = await openService(url, token, env, { id: 'queue', name: 'Job Queue API' }, logger);
  return new RemoteJobs(storage, service);
}

class RemoteJobs implements JobsBackend {
  readonly pollMs = 1000;

  // a refused token is said by StorageApiClient, in the wording every command gives it
  constructor(
    private readonly storage: StorageApiClient,
    private readonly api: StorageApiClient,
  ) {}

  private queue(...args: Parameters<StorageApiClient['call']>): Promise<JsonValue> {
    return this.api.call(...args);
  }

  private storageCall(...args: Parameters<StorageApiClient['call']>): Promise<JsonValue> {
    return this.storage.call(...args);
  }

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
    const headers = request.parentRunId ? { 'X-KBC-RunId': request.parentRunId } : undefined;
    const answer = await this.queue('POST', 'jobs', body, undefined, {
      retry: false,
      headers,
      ...JOBS_LIMIT,
    });
    return this.job(answer, 'POST /jobs');
  }

  get(id: string): Promise<JobView> {
    return this.one(id, `GET /jobs/${id}`, () => this.queue('GET', `jobs/${id}`, undefined, undefined, JOBS_LIMIT));
  }

  async search(filter: JobFilter): Promise<JobView[]> {
    const query = new URLSearchParams({ limit: String(filter.limit), sortBy: 'id', sortOrder: 'desc' });
    for (const status of filter.statuses ?? []) query.append('status[]', status);
    for (const config of filter.configIds ?? []) query.append('config[]', config);
    const found = await this.queue('GET', 'search/jobs', undefined, query, JOBS_LIMIT);
    if (!Array.isArray(found))
      throw new UserError('GEX_STORAGE_API_REFUSED', 'The Job Queue API answered GET /search/jobs with no list.');
    return found.map((j) => this.job(j, 'GET /search/jobs'));
  }

  kill(id: string): Promise<JobView> {
    return this.one(id, `POST /jobs/${id}/kill`, () =>
      this.queue('POST', `jobs/${id}/kill`, undefined, undefined, { retry: false, ...JOBS_LIMIT }),
    );
  }

  /** One page of the run's events, newest first, between `sinceId` (exclusive) and `maxId` (inclusive). */
  private async events(job: JobView, limit: number, sinceId?: number, maxId?: number): Promise<RemoteEvent[]> {
    const query: QueryParams = new URLSearchParams({ runId: job.runId, limit: String(limit) });
    if (sinceId !== undefined) query.set('sinceId', String(sinceId));
    if (maxId !== undefined) query.set('maxId', String(maxId));
    const page = await this.storageCall('GET', 'events', undefined, query, EVENTS_LIMIT);
    if (!Array.isArray(page))
      throw new UserError('GEX_STORAGE_API_REFUSED', 'The Storage API answered GET /v2/storage/events with no list.');
    return page.flatMap((e) => eventOf(e) ?? []);
  }

  async log(job: JobView, cursor: string | undefined): Promise<{ lines: LogLine[]; cursor: string | undefined }> {
    const since = cursor === undefined ? undefined : Number(cursor);
    // the API gives the newest events first: page back (maxId) to the cursor, then print oldest first
    const found: RemoteEvent[] = [];
    let maxId: number | undefined;
    for (;;) {
      const page = await this.events(job, EVENTS_PAGE, since, maxId);
      found.push(
        ...page.filter((e) => (since === undefined || e.id > since) && (maxId === undefined || e.id <= maxId)),
      );
      const oldest = Math.min(...page.map((e) => e.id));
      if (page.length < EVENTS_PAGE || found.length >= MAX_LOG_LINES || oldest <= (since ?? 0)) break;
      // a server that ignores maxId would hand back the same page forever
      if (maxId !== undefined && oldest > maxId) break;
      maxId = oldest - 1;
    }
    found.sort((a, b) => a.id - b.id);
    const newest = found.length ? found[found.length - 1].id : since;
    const lines = found.filter((e) => ofJob(e, job)).map((e) => e.line);
    return { lines, cursor: newest === undefined ? undefined : String(newest) };
  }

  async newestLine(job: JobView): Promise<LogLine | undefined> {
    // a child run's lines come too: the newest of this job's among a few
    return (await this.events(job, 20)).find((e) => ofJob(e, job))?.line;
  }
}

interface RemoteEvent {
  id: number;
  jobId: string;
  line: LogLine;
}

/** gex's events name their job (a child run's lines come with the run's); Keboola's may not, and are kept. */
function ofJob(event: RemoteEvent, job: JobView): boolean {
  return event.jobId === '' || event.jobId === job.id;
}

function eventOf(value: JsonValue): RemoteEvent | undefined {
  if (!isJsonObject(value)) return undefined;
  const id = value.get('id');
  const text = typeof id === 'number' ? String(id) : id;
  if (typeof text !== 'string' || !/^\d{1,15}$/.test(text)) return undefined;
  const params = value.get('params');
  const jobId = isJsonObject(params) ? params.get('jobId') : undefined;
  const str = (v: JsonValue | undefined) => (typeof v === 'string' ? v : '');
  return {
    id: Number(text),
    jobId: typeof jobId === 'number' ? String(jobId) : str(jobId),
    line: {
      created: str(value.get('created')),
      level: LEVELS[str(value.get('type'))] ?? 'info',
      message: str(value.get('message')),
    },
  };
}
