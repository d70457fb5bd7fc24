import type { UserErrorCode } from '../../common/error-catalogue.js';
import { UserError } from '../../common/errors.js';
import { displayId, displayText } from '../../common/log-text.js';
import { isJsonObject, type JsonValue } from '../../json/index.js';
import type { Clock } from './retry-budget.js';
import type { StorageApiClient } from './storage-api-client.js';

/**
 * First wait before a job is polled again; it grows by half each time up to JOB_POLL_MAX_MS. Short:
 * a small table's import is done in tens of milliseconds, and each load of a run waits for its job.
 */
export const JOB_POLL_FIRST_MS = 50;
export const JOB_POLL_MAX_MS = 5000;
/** How long a job may run before the wait gives up (a 1 GB import takes minutes, not hours). */
export const JOB_WAIT_MS = 2 * 60 * 60 * 1000;

/** An asynchronous storage job as Keboola's `GET /v2/storage/jobs/{id}` answers it, read defensively. */
export interface StorageJobState {
  id: string;
  status: string;
  results: JsonValue;
  /** error.message of a failed job ('' otherwise) */
  message: string;
}

export interface JobWait {
  api: StorageApiClient;
  clock: Clock;
  /** the server's address, for messages */
  url: string;
  /** what the job does, for messages: "importing out/tables/users.csv into table in.c-a.b" */
  doing: string;
  /** the code of a failed job's error (its message becomes the user's) */
  failure: UserErrorCode;
  timeoutMs?: number;
}

const text = (value: JsonValue | undefined): string =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';

/** A job object as the fields gex reads; anything that is not one is refused. */
export function storageJobOf(wire: JsonValue, wait: Pick<JobWait, 'url' | 'doing'>): StorageJobState {
  const id = isJsonObject(wire) ? text(wire.get('id')) : '';
  // a job id becomes a URL path segment: Keboola's are numbers
  if (!/^\d{1,20}$/.test(id))
    throw new UserError(
      'GEX_STORAGE_API_REFUSED',
      `The Storage API at ${wait.url} answered ${wait.doing} with something other than a job with a numeric id; is it a Storage API?`,
    );
  const job = wire as Map<string, JsonValue>;
  const error = job.get('error');
  return {
    id,
    status: text(job.get('status')),
    results: job.get('results') ?? null,
    message: (isJsonObject(error) ? text(error.get('message')) : text(error)).slice(0, 2000),
  };
}

/**
 * Polls a storage job (202's job object first) until it succeeds — its results are returned — or
 * fails: its error message becomes a UserError of `failure`. Waits grow (50 ms, ×1.5, up to 5 s)
 * on the injected clock; a job still running after `timeoutMs` is given up on, saying which.
 */
export async function waitForJob(first: JsonValue, wait: JobWait): Promise<JsonValue> {
  const { api, clock } = wait;
  const limit = wait.timeoutMs ?? JOB_WAIT_MS;
  const started = clock.now();
  let delay = JOB_POLL_FIRST_MS;
  let job = storageJobOf(first, wait);
  for (;;) {
    if (job.status === 'success') return job.results;
    if (job.status === 'error' || job.status === 'cancelled' || job.status === 'terminated')
      throw new UserError(
        wait.failure,
        `The Storage API at ${wait.url} failed ${wait.doing} (job ${displayId(job.id)}): ${displayText(job.message || job.status)}`,
      );
    if (clock.now() - started >= limit)
      throw new UserError(
        'GEX_STORAGE_API_REFUSED',
        `The Storage API at ${wait.url} is still ${wait.doing} after ${Math.round(limit / 1000)} s (job ${displayId(job.id)}, ${displayText(job.status.slice(0, 40))}); gex stopped waiting.`,
      );
    await clock.sleep(delay);
    delay = Math.min(JOB_POLL_MAX_MS, Math.round(delay * 1.5));
    job = storageJobOf(await api.call('GET', `jobs/${encodeURIComponent(job.id)}`), wait);
  }
}
