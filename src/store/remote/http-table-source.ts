import { CsvError, parse } from 'csv-parse/sync';
import type { Method } from 'got';
import { UserError } from '../../common/errors.js';
import { displayId, displayText } from '../../common/log-text.js';
import { decodeJson, type JsonValue } from '../../json/index.js';
import { StoreError } from '../store-error.js';
import type { TableSource } from '../table-source.js';
import {
  checkBucketId,
  MAX_PREVIEW_ROWS,
  parseTableId,
  storedMoment,
  type TableDetail,
  type TablePreview,
  type TableQuery,
} from '../tables/index.js';
import { storageJobFromWire, tableFromWire } from '../wire/tables.js';
import { SYSTEM_CLOCK, type Clock } from './retry-budget.js';
import { StorageApiClient, type StorageApiClientOptions } from './storage-api-client.js';

/** The largest data-preview answer held in memory (1000 rows of wide tables fit well below it). */
export const MAX_PREVIEW_BYTES = 64 * 1024 * 1024;
/** How long a deletion that Keboola runs as an asynchronous job is waited for. */
const JOB_WAIT_MS = 120_000;
const JOB_POLL_MS = 1000;

export interface HttpTableSourceOptions extends StorageApiClientOptions {
  /** the waits while an asynchronous job runs (tests pass a fake one) */
  jobClock?: Clock;
}

/**
 * Keboola's table API over HTTP (`/v2/storage/buckets`, `/v2/storage/tables`, data-preview), for
 * gex serve and Keboola stacks alike, through the StorageApiClient (token, retries, same-origin
 * redirects). Ids are checked as the embedded store checks them and sent as one URL-encoded path
 * segment; the server's answers are decoded defensively (they are not trusted to be well formed).
 */
export class HttpTableSource implements TableSource {
  private readonly api: StorageApiClient;
  private readonly url: string;
  private readonly clock: Clock;

  constructor(options: HttpTableSourceOptions) {
    this.api = new StorageApiClient(options);
    this.url = options.url;
    this.clock = options.jobClock ?? SYSTEM_CLOCK;
  }

  async listTables(bucketId?: string): Promise<TableDetail[]> {
    const path = bucketId === undefined ? 'tables' : `buckets/${encodeURIComponent(checkBucketId(bucketId))}/tables`;
    const what = bucketId === undefined ? 'the list of tables' : `bucket ${displayId(bucketId)}`;
    const list = await this.call('GET', path, what, { include: 'columns' });
    if (!Array.isArray(list)) throw this.malformed(`GET ${path}`, 'a list of tables');
    return list.map((t) => tableFromWire(t)).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async table(tableId: string): Promise<TableDetail> {
    return tableFromWire(await this.call('GET', tablePath(tableId), `table ${displayId(tableId)}`));
  }

  async preview(tableId: string, query: TableQuery): Promise<TablePreview> {
    const limit = query.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 0 || limit > MAX_PREVIEW_ROWS)
      throw new UserError(
        'GEX_TABLE_REQUEST_INVALID',
        `A preview's limit must be an integer from 0 to ${MAX_PREVIEW_ROWS}.`,
      );
    const path = `${tablePath(tableId)}/data-preview`;
    const { body } = await this.text('GET', path, `table ${displayId(tableId)}`, previewQuery({ ...query, limit }));
    return parsePreview(body, `GET ${path}`, this.url);
  }

  /**
   * All rows through data-preview, which returns at most MAX_PREVIEW_ROWS: a query that may match
   * more is refused, never cut silently (the server's own store can export it whole).
   */
  async read(tableId: string, query: TableQuery, onBatch: (rows: string[][]) => Promise<void>): Promise<string[]> {
    if (query.limit !== undefined && (!Number.isInteger(query.limit) || query.limit < 0))
      throw new UserError('GEX_TABLE_REQUEST_INVALID', 'A limit must be a whole number of rows.');
    const limit = query.limit !== undefined && query.limit <= MAX_PREVIEW_ROWS ? query.limit : MAX_PREVIEW_ROWS;
    const partial = limit === MAX_PREVIEW_ROWS && query.limit !== MAX_PREVIEW_ROWS;
    const detail = partial ? await this.table(tableId) : null;
    const preview = await this.preview(tableId, { ...query, limit });
    if (detail && detail.rowsCount > MAX_PREVIEW_ROWS && preview.rows.length >= MAX_PREVIEW_ROWS) {
      throw new UserError(
        'GEX_TABLE_REQUEST_INVALID',
        `Table ${displayId(tableId)} has ${detail.rowsCount} rows, and the Storage API at ${this.url} returns at most ${MAX_PREVIEW_ROWS} rows over HTTP (data-preview): ` +
          'gex does not write a partial export. Run "gex tables export" on the server\'s own store (--store with its SQLite file or postgres:// URL), ' +
          `or narrow the export to at most ${MAX_PREVIEW_ROWS} rows (--limit, --where-column/--where-values, --changed-since).`,
      );
    }
    if (preview.rows.length > 0) await onBatch(preview.rows);
    return preview.columns;
  }

  async deleteTable(tableId: string): Promise<void> {
    await this.finish(
      await this.text('DELETE', tablePath(tableId), `table ${displayId(tableId)}`),
      `deleting table ${displayId(tableId)}`,
    );
  }

  async deleteBucket(bucketId: string, withTables: boolean): Promise<void> {
    const path = `buckets/${encodeURIComponent(checkBucketId(bucketId))}`;
    await this.finish(
      await this.text('DELETE', path, `bucket ${displayId(bucketId)}`, withTables ? { force: '1' } : undefined),
      `deleting bucket ${displayId(bucketId)}`,
    );
  }

  private async call(
    method: Method,
    path: string,
    what: string,
    query?: Record<string, string> | URLSearchParams,
  ): Promise<JsonValue> {
    try {
      return await this.api.call(method, path, undefined, query);
    } catch (error) {
      throw this.refused(error, method, what);
    }
  }

  private async text(
    method: Method,
    path: string,
    what: string,
    query?: Record<string, string> | URLSearchParams,
  ): Promise<{ status: number; body: string }> {
    try {
      return await this.api.callText(method, path, query, MAX_PREVIEW_BYTES);
    } catch (error) {
      throw this.refused(error, method, what);
    }
  }

  /** Keboola may answer a deletion with 202 and a job: it is done when the job is. */
  private async finish(answer: { status: number; body: string }, doing: string): Promise<void> {
    if (answer.status !== 202) return;
    let job = storageJobFromWire(decodeOrNull(answer.body));
    // a job id becomes a URL path segment: Keboola's are numbers
    if (!/^\d{1,20}$/.test(job.id)) throw this.malformed(doing, 'a job with a numeric id (202)');
    const started = this.clock.now();
    while (job.status !== 'success') {
      if (job.status === 'error' || job.status === 'cancelled' || job.status === 'terminated') {
        throw new UserError(
          'GEX_STORAGE_API_REFUSED',
          `The Storage API at ${this.url} failed ${doing} (job ${displayId(job.id)}): ${displayText(job.message)}`,
        );
      }
      if (this.clock.now() - started > JOB_WAIT_MS) {
        throw new UserError(
          'GEX_STORAGE_API_REFUSED',
          `The Storage API at ${this.url} is still ${doing} after ${JOB_WAIT_MS / 1000} s (job ${displayId(job.id)}); check it later with "gex tables list".`,
        );
      }
      await this.clock.sleep(JOB_POLL_MS);
      job = storageJobFromWire(
        await this.call('GET', `jobs/${encodeURIComponent(job.id)}`, `job ${displayId(job.id)}`),
      );
    }
  }

  /** A store refusal as one safe line naming what was asked for and where. */
  private refused(error: unknown, method: Method, what: string): unknown {
    if (!(error instanceof StoreError)) return error;
    const said = `${displayText(error.message.slice(0, 500))}${error.code ? ` [${displayText(error.code.slice(0, 100))}]` : ''}`;
    if (error.status === 404)
      return new UserError(
        'GEX_STORE_NOT_FOUND',
        `${capitalize(what)} does not exist in the project of the Storage API at ${this.url} (${said}).`,
        { cause: error },
      );
    // said by StorageApiClient already, in the wording every command gives it
    if (error.status === 401) return error;
    if (error.status === 403)
      return new UserError(
        'GEX_STORE_ACCESS_DENIED',
        `The token may not ${method === 'GET' ? 'read' : 'delete'} ${what} at the Storage API at ${this.url} (${said}).`,
        { cause: error },
      );
    return new UserError(
      'GEX_STORAGE_API_REFUSED',
      `The Storage API at ${this.url} refused ${method} of ${what}: ${said}`,
      { cause: error },
    );
  }

  private malformed(call: string, expected: string): UserError {
    return new UserError(
      'GEX_STORAGE_API_REFUSED',
      `The Storage API at ${this.url} answered ${call} with something other than ${expected}; is it a Storage API?`,
    );
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** `tables/<id>`: the id checked as a table id (no control characters, bounded) and encoded as one segment. */
function tablePath(tableId: string): string {
  parseTableId(tableId);
  return `tables/${encodeURIComponent(tableId)}`;
}

/** data-preview's parameters as Keboola names them (`whereValues[]` repeated). */
export function previewQuery(query: TableQuery): URLSearchParams {
  const params = new URLSearchParams();
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (query.columns && query.columns.length > 0) params.set('columns', query.columns.join(','));
  if (query.whereColumn !== undefined && query.whereColumn !== '') {
    params.set('whereColumn', query.whereColumn);
    for (const value of query.whereValues ?? []) params.append('whereValues[]', value);
    params.set('whereOperator', query.whereOperator ?? 'eq');
  }
  if (query.changedSince !== undefined) {
    const since = query.changedSince;
    const at = storedMoment(since);
    // every row changed after a moment before year 0: no filter. Unix seconds, or an ISO date before 1970 (never negative seconds)
    if (!('beyond' in at && at.beyond === 'before'))
      params.set(
        'changedSince',
        since.getTime() >= 0 ? String(Math.floor(since.getTime() / 1000)) : since.toISOString(),
      );
  }
  return params;
}

/** A data-preview CSV (header, then rows) as columns and rows; every row must match the header. */
export function parsePreview(body: string, call: string, url: string): TablePreview {
  let records: string[][];
  try {
    records = parse(body, {
      bom: true,
      relax_column_count: true,
      skip_empty_lines: true,
      max_record_size: MAX_PREVIEW_BYTES,
    });
  } catch (error) {
    if (error instanceof CsvError)
      throw new UserError(
        'GEX_STORAGE_API_REFUSED',
        `The Storage API at ${url} answered ${call} with invalid CSV: ${displayText(error.message)}`,
      );
    throw error;
  }
  const [columns = [], ...rows] = records;
  rows.forEach((row, i) => {
    if (row.length !== columns.length)
      throw new UserError(
        'GEX_STORAGE_API_REFUSED',
        `The Storage API at ${url} answered ${call} with a CSV whose row ${i + 1} has ${row.length} fields for ${columns.length} columns.`,
      );
  });
  return { columns, rows };
}

function decodeOrNull(body: string): JsonValue {
  try {
    return decodeJson(body);
  } catch {
    return null;
  }
}
