import { RunCancelled } from '../common/cancellation.js';
import { errorReport, type ErrorReport } from '../common/errors.js';

/**
 * The run summary (`gex run --summary FILE`): its types and the only builders of it. A run of a
 * stored configuration and a run of a data folder fill the same shape through these functions.
 */

/**
 * A top-level job in the run summary: how far it got and why it stopped. Child jobs are not
 * listed (one per parent record: a summary could not stay small), their stops are in the log.
 */
export interface JobRunSummary {
  /** the job's dataType (configuration text; JSON-encoded in the summary) */
  job: string;
  pages: number;
  records: number;
  /**
   * a cap (`forceStop.pages`, `forceStop.time`, `forceStop.volume`, `limitStop.count`,
   * `limitStop.field`) or a natural end (`underflow`, `emptyPage`, `total`, `nextPageFlag`,
   * `noNextPage`, `duplicatePage`, `noPagination`)
   */
  stoppedBy: string;
}

export interface TableSummary {
  file: string;
  rows: number;
  /** the CSV file's size in bytes */
  bytes: number;
  /** the file was loaded into the project's Storage tables (see tableId) */
  loaded: boolean;
  tableId?: string;
}

/** A table of the row's input mapping, exported into its folder before it ran. */
export interface InputTableSummary {
  source: string;
  /** relative to the data folder */
  file: string;
  rows: number;
  /** the CSV file's size in bytes */
  bytes: number;
}

export interface RowSummary {
  /** null for a configuration without rows (and for a data folder) */
  id: string | null;
  name: string;
  /** the row's folder relative to the data folder: `rows/<id encoded as one segment>` (`.` without rows) */
  folder: string;
  status: 'success' | 'failed' | 'cancelled' | 'skipped' | 'not run';
  reason?: string;
  requests: number;
  records: number;
  tables: TableSummary[];
  /** the row's top-level jobs in run order (empty unless the extraction finished) */
  jobs: JobRunSummary[];
  /** present when the row had input tables that were exported */
  inputTables?: InputTableSummary[];
  durationMs: number;
  /** the component state the run produced (saved only when every row succeeded) */
  state?: unknown;
  /** the store holds the state this run produced — or, when putting it back failed, may hold it (see `stateRollback`) */
  stateSaved: boolean;
}

/**
 * A failed save of several states on a remote Storage API (saved one by one): the states saved
 * before the failure were put back — all of them (`complete`) or not (`incomplete`).
 */
export interface StateRollbackSummary {
  status: 'complete' | 'incomplete';
  /** the row whose save failed (null: the configuration's own state) */
  failedRowId: string | null;
  restoredRowIds: Array<string | null>;
  notRestored: Array<{ rowId: string | null; reason: string }>;
}

export interface RunSummary {
  componentId: string;
  configId: string;
  configVersion: number | null;
  status: 'success' | 'error' | 'cancelled';
  message: string;
  rowsRun: number;
  rowsSkipped: number;
  rows: RowSummary[];
  /** every state the run produced is saved (rows' `stateSaved` say which are) */
  stateSaved: boolean;
  /** set when saving states through a remote store failed part-way */
  stateRollback?: StateRollbackSummary;
  durationMs: number;
  error?: ErrorReport;
}

/** The message of a run that ran every unit it planned. */
export const RUN_FINISHED = 'Component processing finished.';

/** A run's summary before anything ran: success so far, no rows. */
export function startedRunSummary(componentId: string, configId: string): RunSummary {
  return {
    componentId,
    configId,
    configVersion: null,
    status: 'success',
    message: '',
    rowsRun: 0,
    rowsSkipped: 0,
    rows: [],
    stateSaved: false,
    durationMs: 0,
  };
}

/** A row of the summary before it ran (or one that will not run: `skipped`, `not run`). */
export function rowSummary(
  row: { id: string; name: string } | null,
  folder: string,
  status: RowSummary['status'],
  reason?: string,
): RowSummary {
  return {
    id: row?.id ?? null,
    name: row?.name ?? '',
    folder,
    status,
    reason,
    requests: 0,
    records: 0,
    tables: [],
    jobs: [],
    durationMs: 0,
    stateSaved: false,
  };
}

/** The summary's entries of an extraction's jobs (the human stop reasons stay in the log). */
export function jobRunSummaries(jobs: ReadonlyArray<JobRunSummary>): JobRunSummary[] {
  return jobs.map(({ job, pages, records, stoppedBy }) => ({ job, pages, records, stoppedBy }));
}

/**
 * The summary of a run that failed or was stopped: a stop is no error (the summary says
 * `cancelled` and why), anything else is an error of its kind.
 */
export function recordFailure(summary: RunSummary, error: unknown, cancelled?: RunCancelled): void {
  summary.status = cancelled ? 'cancelled' : 'error';
  if (!cancelled) summary.error = errorOf(error);
  summary.message = (cancelled ?? (error as Error)).message;
}

/** A failure after the run itself succeeded (e.g. its tables gone from disk) still fails the summary. */
export function recordLateFailure(summary: RunSummary, error: unknown): void {
  if (summary.status !== 'success') return;
  Object.assign(summary, { status: 'error', message: (error as Error).message, error: errorOf(error) });
}

/** The summary of a run that failed (or was stopped) before its runner started. */
export function summaryOfUnstartedRun(
  componentId: string,
  configId: string,
  durationMs: number,
  error: unknown,
): RunSummary {
  const cancelled = error instanceof RunCancelled;
  return {
    ...startedRunSummary(componentId, configId),
    status: cancelled ? 'cancelled' : 'error',
    message: (error as Error).message,
    durationMs,
    error: cancelled ? undefined : errorOf(error),
  };
}

function errorOf(error: unknown): NonNullable<RunSummary['error']> {
  return errorReport(error);
}
