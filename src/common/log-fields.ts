/**
 * The structured fields of gex's log lines (`--log-format json`): what a line is about, as data a
 * log system can filter on, besides the sentence in `msg`. Bound with child loggers
 * (`logger.child({ configId })`) or given with one call (`logger.info({ records }, '…')`).
 * The text format leaves them out: its sentence already says them in words. Every field gex's
 * own code logs is one of these (test/common/log-fields.test.ts checks the source), so no
 * internal field reaches a text line; only a library's fields (fastify's) are printed there.
 */
export interface LogFields {
  componentId?: string;
  configId?: string;
  configVersion?: number;
  /** the row being run; absent for a configuration without rows */
  rowId?: string;
  /** the row's folder relative to the data folder */
  folder?: string;
  iteration?: number;
  /** a job's data type */
  job?: string;
  /** the job's endpoint (placeholders filled for a child job) */
  endpoint?: string;
  method?: string;
  url?: string;
  page?: number;
  pages?: number;
  records?: number;
  requests?: number;
  /** a child job's summary: the parent records it ran for, and its runs (one per placeholder combination) */
  parentRecords?: number;
  runs?: number;
  bytes?: number;
  /** a table file in out/tables */
  table?: string;
  /** rows of a table file */
  rows?: number;
  tables?: number | Array<{ file: string; rows: number }>;
  /** a Storage table (`in.c-<bucket>.<table>`) a file was loaded into or an input table read from */
  tableId?: string;
  /** a file of an input table, relative to the row's folder */
  file?: string;
  /** how a table was loaded: incremental, its primary key, whether the load created it, columns it added */
  incremental?: boolean;
  primaryKey?: string[];
  tableCreated?: boolean;
  columnsAdded?: string[];
  /** false: the run keeps tables as files (a remote store) */
  tablesLoaded?: boolean;
  /** input tables of a row (storage.input.tables) */
  inputTables?: number;
  /** an HTTP status, or how a row ended (success, failed, cancelled, skipped) */
  status?: number | string;
  durationMs?: number;
  attempt?: number;
  maxRetries?: number;
  retryInMs?: number;
  /** at the retry whose line gives the worst case (retries piling up): when the last retry would be if it keeps failing (ISO 8601, UTC) */
  lastRetryAt?: string;
  /** a network error code (ECONNRESET, ETIMEDOUT, …) */
  errorCode?: string;
  /** user or application (the exit code follows it) */
  errorKind?: string;
  /** the error's code in gex's catalogue (GEX_…, docs/errors.md) */
  code?: string;
  stopReason?: string;
  /** why a job stopped, for machines: a cap (forceStop.pages, …) or a natural end (underflow, …) */
  stoppedBy?: string;
  reason?: string;
  /** how a loaded table's destination was chosen (the output mapping, the default bucket, …) */
  destinationFrom?: string;
  /** the data folder of a run (absolute) */
  dataDir?: string;
  /** a queue job, and the schedule whose tick created it (the tick's time; ticks missed in a row) */
  jobId?: number | string;
  scheduleId?: number | string;
  tick?: string;
  missedTicks?: number;
  /** Storage jobs a line is about (ids) */
  jobs?: Array<number | string>;
  /** the id a server's 500 answer carries, to find its log line */
  exceptionId?: string;
}

const FIELD_NAMES: Record<keyof LogFields, true> = {
  componentId: true,
  configId: true,
  configVersion: true,
  rowId: true,
  folder: true,
  iteration: true,
  job: true,
  endpoint: true,
  method: true,
  url: true,
  page: true,
  pages: true,
  records: true,
  requests: true,
  parentRecords: true,
  runs: true,
  bytes: true,
  table: true,
  rows: true,
  tables: true,
  tableId: true,
  file: true,
  incremental: true,
  primaryKey: true,
  tableCreated: true,
  columnsAdded: true,
  tablesLoaded: true,
  inputTables: true,
  status: true,
  durationMs: true,
  attempt: true,
  maxRetries: true,
  retryInMs: true,
  lastRetryAt: true,
  errorCode: true,
  errorKind: true,
  code: true,
  stopReason: true,
  stoppedBy: true,
  reason: true,
  destinationFrom: true,
  dataDir: true,
  jobId: true,
  scheduleId: true,
  tick: true,
  missedTicks: true,
  jobs: true,
  exceptionId: true,
};

/** Whether a key of a log record is one of gex's structured fields (left out of the text format). */
export function isStructuredField(key: string): boolean {
  return Object.hasOwn(FIELD_NAMES, key);
}
