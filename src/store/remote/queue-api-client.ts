import { UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../json/index.js';
import { openService, type GivenToken } from './api-index.js';
import type { QueryParams, StorageApiClient } from './storage-api-client.js';

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

/** One Storage API event of a run, as a log line of its job. */
export interface RunEvent {
  id: number;
  /** the job the event names ('' when it names none: Keboola's may not) */
  jobId: string;
  line: { created: string; level: string; message: string };
}

/**
 * The Job Queue API of a Storage API (gex serve or a Keboola stack), found as Keboola's clients
 * find it: the `queue` entry of `services` in the API index; and the Storage API's events of a
 * job's run (its log). Both APIs go through StorageApiClient (the token header, error mapping,
 * retries, size limits); only GETs are retried — a POST whose answer was lost may have queued or
 * killed the job already. Answers are the APIs' job objects, as they came.
 */
export class QueueApiClient {
  // a refused token is said by StorageApiClient, in the wording every command gives it
  private constructor(
    private readonly storage: StorageApiClient,
    private readonly queue: StorageApiClient,
  ) {}

  static async open(url: string, token: GivenToken, env: NodeJS.ProcessEnv, logger?: Logger): Promise<QueueApiClient> {
    const { storage, service } = await openService(url, token, env, { id: 'queue', name: 'Job Queue API' }, logger);
    return new QueueApiClient(storage, service);
  }

  /** POST /jobs, sent once; `parentRunId` is its `X-KBC-RunId` */
  createJob(body: JsonObject, parentRunId: string | undefined): Promise<JsonValue> {
    const headers = parentRunId ? { 'X-KBC-RunId': parentRunId } : undefined;
    return this.queue.call('POST', 'jobs', body, undefined, { retry: false, headers, ...JOBS_LIMIT });
  }

  /** GET /jobs/{id}; a StoreError with status 404 when the project has no such job */
  getJob(id: string): Promise<JsonValue> {
    return this.queue.call('GET', `jobs/${encodeURIComponent(id)}`, undefined, undefined, JOBS_LIMIT);
  }

  async searchJobs(query: URLSearchParams): Promise<JsonValue[]> {
    const found = await this.queue.call('GET', 'search/jobs', undefined, query, JOBS_LIMIT);
    if (!Array.isArray(found))
      throw new UserError('GEX_STORAGE_API_REFUSED', 'The Job Queue API answered GET /search/jobs with no list.');
    return found;
  }

  /** POST /jobs/{id}/kill, sent once */
  killJob(id: string): Promise<JsonValue> {
    return this.queue.call('POST', `jobs/${encodeURIComponent(id)}/kill`, undefined, undefined, {
      retry: false,
      ...JOBS_LIMIT,
    });
  }

  /** One page of the run's events, newest first, between `sinceId` (exclusive) and `maxId` (inclusive). */
  async runEvents(runId: string, limit: number, sinceId?: number, maxId?: number): Promise<RunEvent[]> {
    const query: QueryParams = new URLSearchParams({ runId, limit: String(limit) });
    if (sinceId !== undefined) query.set('sinceId', String(sinceId));
    if (maxId !== undefined) query.set('maxId', String(maxId));
    const page = await this.storage.call('GET', 'events', undefined, query, EVENTS_LIMIT);
    if (!Array.isArray(page))
      throw new UserError('GEX_STORAGE_API_REFUSED', 'The Storage API answered GET /v2/storage/events with no list.');
    return page.flatMap((e) => eventOf(e) ?? []);
  }

  /** The run's events after `sinceId` (all of them without), oldest first; at most about MAX_LOG_LINES. */
  async runEventsAfter(runId: string, sinceId: number | undefined): Promise<RunEvent[]> {
    // the API gives the newest events first: page back (maxId) to sinceId
    const found: RunEvent[] = [];
    let maxId: number | undefined;
    for (;;) {
      const page = await this.runEvents(runId, EVENTS_PAGE, sinceId, maxId);
      found.push(
        ...page.filter((e) => (sinceId === undefined || e.id > sinceId) && (maxId === undefined || e.id <= maxId)),
      );
      const oldest = Math.min(...page.map((e) => e.id));
      if (page.length < EVENTS_PAGE || found.length >= MAX_LOG_LINES || oldest <= (sinceId ?? 0)) break;
      // a server that ignores maxId would hand back the same page forever
      if (maxId !== undefined && oldest > maxId) break;
      maxId = oldest - 1;
    }
    return found.sort((a, b) => a.id - b.id);
  }
}

function eventOf(value: JsonValue): RunEvent | undefined {
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
