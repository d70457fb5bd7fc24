import type { RowSummary } from '../runner/run-summary.js';
import type { RunSummaryFile } from './job-run-contract.js';

/**
 * What a job's run moved (docs/jobs.md#what-a-job-moved): its counts, read from the run's summary
 * file — which the job's process wrote and which is not trusted. Every count is a non-negative
 * whole number (anything else in the file counts as 0), every total is a sum over every entry of
 * the file (at most 16 MiB, so its lists are bounded), and what is listed is bounded: at most
 * MAX_LISTED_ROWS rows and MAX_LISTED_TABLES tables, with how many were left out.
 */

/** A table a row wrote (`out/tables`) or read (`in/tables`). */
export interface JobTableCounts {
  /** the Storage table: the one the file was loaded into, or the input table exported; null when none */
  tableId: string | null;
  /** the CSV file, relative to the run's data folder */
  file: string;
  rows: number;
  bytes: number;
}

export interface JobRowCounts {
  /** null for a configuration without rows */
  id: string | null;
  name: string;
  status: RowSummary['status'] | 'unknown';
  requests: number;
  records: number;
  durationMs: number;
  tables: JobTableCounts[];
  inputTables: JobTableCounts[];
}

/** The counts of a job's run: totals over every row and table, a bounded list of them. */
export interface JobRunCounts {
  rowsRun: number;
  rowsSkipped: number;
  requests: number;
  /** the top-level jobs' records (as each row's "Finished" log line counts them) */
  records: number;
  durationMs: number;
  outputTables: number;
  outputRows: number;
  outputBytes: number;
  inputTables: number;
  inputRows: number;
  inputBytes: number;
  /** the first MAX_LISTED_ROWS rows, in the run's order */
  rows: JobRowCounts[];
  /** rows not listed */
  rowsNotListed: number;
  /** tables (output and input) not listed: of rows not listed, or past MAX_LISTED_TABLES */
  tablesNotListed: number;
}

export const MAX_LISTED_ROWS = 100;
/** the tables listed over all rows, output and input together */
export const MAX_LISTED_TABLES = 100;
/** a longer id, name or file is cut (with `…`) */
export const MAX_TEXT = 256;

const ROW_STATUSES: ReadonlySet<string> = new Set<RowSummary['status']>([
  'success',
  'failed',
  'cancelled',
  'skipped',
  'not run',
]);

/** A count as read: a non-negative safe integer, else 0. */
function count(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

/** A sum that stays a safe integer (a hostile file's counts cannot make it imprecise or infinite). */
const add = (a: number, b: number) => Math.min(a + b, Number.MAX_SAFE_INTEGER);

function text(value: unknown): string {
  if (typeof value !== 'string') return '';
  return value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT)}…` : value;
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** Where a list's entries name their Storage table. */
type TableIdOf = (entry: Record<string, unknown>) => unknown;
interface TableIds {
  tables: TableIdOf;
  inputTables: TableIdOf;
}
/** A summary's output tables name the table a file was loaded into, its input tables their `source`. */
const SUMMARY_IDS: TableIds = {
  tables: (t) => (t.loaded === true ? t.tableId : undefined),
  inputTables: (t) => t.source,
};
/** counts (metrics.gex) name both `tableId` */
const COUNTS_IDS: TableIds = { tables: (t) => t.tableId, inputTables: (t) => t.tableId };

interface Totals {
  tables: number;
  rows: number;
  bytes: number;
}

interface Collected extends Pick<JobRunCounts, 'requests' | 'records' | 'rows' | 'rowsNotListed' | 'tablesNotListed'> {
  output: Totals;
  input: Totals;
}

/**
 * One pass over a list of rows: the totals of every entry, and entries made only for what is
 * listed (a file of millions of empty entries makes no million objects).
 */
function collect(entries: unknown, ids: TableIds): Collected {
  const output: Totals = { tables: 0, rows: 0, bytes: 0 };
  const input: Totals = { tables: 0, rows: 0, bytes: 0 };
  const rows: JobRowCounts[] = [];
  let requests = 0;
  let records = 0;
  let room = MAX_LISTED_TABLES;
  let tablesNotListed = 0;
  const tablesOf = (value: unknown, idOf: TableIdOf, totals: Totals, listRow: boolean) => {
    const kept: JobTableCounts[] = [];
    for (const entry of list(value)) {
      const t = record(entry);
      totals.tables = add(totals.tables, 1);
      totals.rows = add(totals.rows, count(t.rows));
      totals.bytes = add(totals.bytes, count(t.bytes));
      if (listRow && room > 0) {
        const id = idOf(t);
        kept.push({
          tableId: typeof id === 'string' ? text(id) : null,
          file: text(t.file),
          rows: count(t.rows),
          bytes: count(t.bytes),
        });
        room--;
      } else tablesNotListed = add(tablesNotListed, 1);
    }
    return kept;
  };
  const all = list(entries);
  for (const [i, entry] of all.entries()) {
    const r = record(entry);
    requests = add(requests, count(r.requests));
    records = add(records, count(r.records));
    const listRow = i < MAX_LISTED_ROWS;
    const tables = tablesOf(r.tables, ids.tables, output, listRow);
    const inputTables = tablesOf(r.inputTables, ids.inputTables, input, listRow);
    if (!listRow) continue;
    const status = typeof r.status === 'string' && ROW_STATUSES.has(r.status) ? r.status : 'unknown';
    rows.push({
      id: typeof r.id === 'string' ? text(r.id) : null,
      name: text(r.name),
      status: status as JobRowCounts['status'],
      requests: count(r.requests),
      records: count(r.records),
      durationMs: count(r.durationMs),
      tables,
      inputTables,
    });
  }
  return { requests, records, output, input, rows, rowsNotListed: all.length - rows.length, tablesNotListed };
}

/** The counts of a run from its summary file; undefined when there is no summary (or it is no object). */
export function countsOfRun(summary: RunSummaryFile | undefined): JobRunCounts | undefined {
  if (typeof summary !== 'object' || summary === null || Array.isArray(summary)) return undefined;
  const { output, input, ...collected } = collect(summary.rows, SUMMARY_IDS);
  return {
    rowsRun: count(summary.rowsRun),
    rowsSkipped: count(summary.rowsSkipped),
    requests: collected.requests,
    records: collected.records,
    durationMs: count(summary.durationMs),
    outputTables: output.tables,
    outputRows: output.rows,
    outputBytes: output.bytes,
    inputTables: input.tables,
    inputRows: input.rows,
    inputBytes: input.bytes,
    rows: collected.rows,
    rowsNotListed: collected.rowsNotListed,
    tablesNotListed: collected.tablesNotListed,
  };
}

/**
 * Counts as a job object's `metrics.gex` holds them (written by jobToWire), read back from a
 * server that is not trusted: each value checked as the summary's are, the lists bounded again.
 */
export function readJobRunCounts(value: unknown): JobRunCounts | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const c = value as Record<string, unknown>;
  const { rows, rowsNotListed, tablesNotListed } = collect(c.rows, COUNTS_IDS);
  return {
    rowsRun: count(c.rowsRun),
    rowsSkipped: count(c.rowsSkipped),
    requests: count(c.requests),
    records: count(c.records),
    durationMs: count(c.durationMs),
    outputTables: count(c.outputTables),
    outputRows: count(c.outputRows),
    outputBytes: count(c.outputBytes),
    inputTables: count(c.inputTables),
    inputRows: count(c.inputRows),
    inputBytes: count(c.inputBytes),
    rows,
    rowsNotListed: add(count(c.rowsNotListed), rowsNotListed),
    tablesNotListed: add(count(c.tablesNotListed), tablesNotListed),
  };
}
