import { EXIT_SUCCESS, EXIT_USER_ERROR } from '../common/errors.js';
import { countsOfRun } from './job-metrics.js';
import type { JobResult } from './job-record.js';
import type { RunSummaryFile } from './job-run-contract.js';
import type { JobStatus } from './statuses.js';

/** The most tables a result's `output.tables` lists; the rest are in its `output.tablesNotListed`. */
export const MAX_OUTPUT_TABLES = 1000;
/** a longer table id is no table id */
const MAX_TABLE_ID = 500;

function output(summary: RunSummaryFile | undefined): JobResult['output'] {
  const ids = new Set<string>();
  let notListed = 0;
  for (const row of Array.isArray(summary?.rows) ? summary.rows : [])
    for (const t of Array.isArray(row?.tables) ? row.tables : []) {
      if (t?.loaded !== true || typeof t.tableId !== 'string' || t.tableId.length > MAX_TABLE_ID) continue;
      if (ids.size < MAX_OUTPUT_TABLES) ids.add(t.tableId);
      else if (!ids.has(t.tableId)) notListed++;
    }
  const tables = [...ids].map((id) => {
    const name = id.slice(id.lastIndexOf('.') + 1);
    // gex's summary names tables, not their columns
    return { id, name, displayName: name, columns: [] };
  });
  return notListed > 0 ? { tables, tablesNotListed: notListed } : { tables };
}

/** `result` with the run's counts, when the run wrote a summary. */
function withCounts(result: JobResult, summary: RunSummaryFile | undefined): JobResult {
  const counts = countsOfRun(summary);
  return counts ? { ...result, counts } : result;
}

/** A finished run's result: Keboola's messages; an error's type from the exit code (1 = user). */
export function resultOfRun(
  s: RunSummaryFile | undefined,
  exitCode: number | null,
): { status: 'success' | 'error'; result: JobResult } {
  const version =
    typeof s?.configVersion === 'number' || typeof s?.configVersion === 'string' ? String(s.configVersion) : null;
  const out = output(s);
  if (exitCode === EXIT_SUCCESS && s?.status === 'success') {
    const message = s.rowsRun === 0 ? 'No configurations executed.' : 'Component processing finished.';
    return { status: 'success', result: withCounts({ message, configVersion: version, output: out }, s) };
  }
  const text =
    typeof s?.error?.message === 'string'
      ? s.error.message
      : typeof s?.message === 'string'
        ? s.message
        : `gex run exited with code ${exitCode ?? 'none'}`;
  const message = text.length > 4000 ? `${text.slice(0, 4000)}…` : text;
  const type: 'user' | 'application' = exitCode === EXIT_USER_ERROR ? 'user' : 'application';
  // the run's stable error code (docs/errors.md), when its summary names one
  const code = typeof s?.error?.code === 'string' && /^GEX_[A-Z_]{1,60}$/.test(s.error.code) ? s.error.code : undefined;
  const error = { type, message, ...(code ? { code } : {}) };
  return { status: 'error', result: withCounts({ message, configVersion: version, output: out, error }, s) };
}

/** How a job's process ended, as its worker saw it. */
export interface RunEnd {
  /** the job was asked to be killed (here, or through the store: its status is `terminating`) */
  killed: boolean;
  /** it ran past its timeout (`timeoutSeconds`) and was stopped */
  timedOut: boolean;
  timeoutSeconds: number;
  /** the worker stopped it: the worker is stopping, or can no longer guard it */
  workerStopped: boolean;
  summary: RunSummaryFile | undefined;
  exitCode: number | null;
}

/**
 * The outcome rules of a job whose process ended: a kill, a timeout, a stopped worker, else the
 * run's own result. A stopped run's summary (when it wrote one) still says what it moved.
 */
export function runOutcome(current: JobStatus, end: RunEnd): { status: JobStatus; result: JobResult } {
  const stopped = (message: string, type?: 'user' | 'application') =>
    withCounts(resultWithMessage(message, type), end.summary);
  if (current === 'terminating' || end.killed)
    return { status: 'terminated', result: stopped('The job was killed: its process was stopped (no state saved).') };
  if (end.timedOut) {
    const message = `The job timed out after ${end.timeoutSeconds} seconds: its process was stopped (no state saved).`;
    return { status: 'error', result: stopped(message, 'user') };
  }
  if (end.workerStopped) return { status: 'error', result: stopped(WORKER_STOPPED, 'application') };
  return resultOfRun(end.summary, end.exitCode);
}

/** A job ended without a result of its own (killed, timed out, worker gone). */
export function resultWithMessage(message: string, type?: 'user' | 'application'): JobResult {
  return { message, configVersion: null, output: { tables: [] }, ...(type ? { error: { type, message } } : {}) };
}

export const WORKER_STOPPED = 'The job ended with an error: the worker stopped while it ran (its process is gone).';
export const KILLED_WITHOUT_WORKER =
  'The job was killed: its worker had stopped, so no process ran it any more (no state saved).';

/**
 * A lost worker's job: an application error (retried when the job has retries left); a job that
 * was being killed is `terminated` — the kill is done, no process runs it.
 */
export const lostWorkerOutcome = (current: JobStatus) =>
  current === 'terminating'
    ? { status: 'terminated' as const, result: resultWithMessage(KILLED_WITHOUT_WORKER) }
    : { status: 'error' as const, result: resultWithMessage(WORKER_STOPPED, 'application') };
