import { open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { RunSummary } from '../runner/run-summary.js';

/**
 * The contract between a worker and the `gex run` process it starts for a job — the one place it
 * is written down (docs/jobs.md#the-jobs-process):
 *
 * - **argv**: `run` and fixed options only, each one `--name=value` entry whose value the worker
 *   made (a path in the job's folder, a number). Nothing taken from data is ever on the command
 *   line: an id there could be read as an option (`--log-file=/x`, `--store=…`, `--`, `-h`), split
 *   at a comma or trimmed by the option's parser.
 * - **the job file** (`--job-file`): the job's identity — component, configuration, project, rows,
 *   force — as JSON, read back exactly: whatever the ids hold, they are values.
 * - **environment**: the worker's, without any `KBC_*` variable (the job's identity is not the
 *   server's), with the store in `GEX_STORE` (never on a command line: a PostgreSQL URL may hold a
 *   password) and the worker's pid in `GEX_JOB_PARENT_PID` (the run stops when its worker is gone).
 * - **output**: JSON log lines (`--log-format=json`; JobLogCollector keeps each line's message,
 *   level and time once), the run summary in the summary file (resultOfRun reads it) and the exit
 *   code (0, 1 user error, 2 application error, 143 stopped).
 */

/** The worker's pid, in the environment of each job's `gex run` (see stopWhenParentGone). */
export const PARENT_PID_VARIABLE = 'GEX_JOB_PARENT_PID';
/** The option of `gex run` that names the job file (hidden from its help: workers use it). */
export const JOB_FILE_OPTION = 'job-file';
/** a job file larger than this is not a job file (a job's row ids are bounded by its 1 MiB request) */
const MAX_JOB_FILE_BYTES = 8 * 1024 * 1024;
/** a summary file larger than this is not read (the job's result then says only the exit code) */
const MAX_SUMMARY_BYTES = 16 * 1024 * 1024;

/** What a job's `gex run` runs. */
export interface JobRunSpec {
  componentId: string;
  configId: string;
  /** the project's name in the embedded store */
  project: string;
  /** empty: every enabled row */
  rowIds: string[];
  /** run a disabled configuration (mode forceRun) */
  force: boolean;
}

/** The files of one job's run, all in the job's folder. */
export interface JobRunFiles {
  jobFile: string;
  dataDir: string;
  summaryFile: string;
}

export function jobRunFiles(jobDir: string): JobRunFiles {
  return {
    jobFile: path.join(jobDir, 'job.json'),
    dataDir: path.join(jobDir, 'data'),
    summaryFile: path.join(jobDir, 'summary.json'),
  };
}

/** Writes the job file (created new: never through a file or link already there). */
export async function writeJobFile(file: string, spec: JobRunSpec): Promise<void> {
  const handle = await open(file, 'wx', 0o600);
  try {
    await handle.writeFile(JSON.stringify({ version: 1, ...spec }));
  } finally {
    await handle.close();
  }
}

/**
 * The arguments after gex's own script: `run` and one `--name=value` entry per option (yargs
 * reads a value given after `=` as that option's value, whatever it starts with).
 */
export function jobRunArgs(files: JobRunFiles, runLockWaitSeconds: number): string[] {
  const option = (name: string, value: string) => `--${name}=${value}`;
  return [
    'run',
    option(JOB_FILE_OPTION, files.jobFile),
    option('data-dir', files.dataDir),
    option('summary', files.summaryFile),
    // the run lock of a job's configuration may still be held for a moment by the `gex run` of a worker
    // that died (it stops within a second of its parent); a run started by hand beside the queue is waited for as long
    option('wait', String(runLockWaitSeconds)),
    option('log-format', 'json'),
  ];
}

/** The environment of a job's `gex run`. */
export function jobRunEnv(base: NodeJS.ProcessEnv, store: string, parentPid: number): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(base).filter(([name]) => !name.startsWith('KBC_')));
  env.GEX_STORE = store;
  env[PARENT_PID_VARIABLE] = String(parentPid);
  return env;
}

const isString = (value: unknown): value is string => typeof value === 'string';

/** Reads a job file (the run side); throws naming what is wrong. */
export async function readJobFile(file: string): Promise<JobRunSpec> {
  if ((await stat(file)).size > MAX_JOB_FILE_BYTES) throw new Error(`${file} is not a job file: it is too large`);
  const value = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown> | null;
  const spec = value ?? {};
  if (
    spec.version !== 1 ||
    !isString(spec.componentId) ||
    !isString(spec.configId) ||
    !isString(spec.project) ||
    !Array.isArray(spec.rowIds) ||
    !spec.rowIds.every(isString) ||
    typeof spec.force !== 'boolean'
  )
    throw new Error(`${file} is not a job file of this gex version`);
  return {
    componentId: spec.componentId,
    configId: spec.configId,
    project: spec.project,
    rowIds: spec.rowIds,
    force: spec.force,
  };
}

/** A value read back from a file: the shape of `T`, any part of which may be missing (each is checked where used). */
export type ReadBack<T> =
  T extends ReadonlyArray<infer E>
    ? Array<ReadBack<E> | undefined>
    : T extends object
      ? { [K in keyof T]?: ReadBack<T[K]> | null }
      : T;

/** The summary file of a job's run: the runner's RunSummary, as read back. */
export type RunSummaryFile = ReadBack<RunSummary>;

/** The run's summary (read defensively), or undefined when it wrote none (or one too large, not JSON, no object). */
export async function readRunSummary(file: string): Promise<RunSummaryFile | undefined> {
  try {
    if ((await stat(file)).size > MAX_SUMMARY_BYTES) return undefined;
    const summary = JSON.parse(await readFile(file, 'utf8')) as unknown;
    return typeof summary === 'object' && summary !== null ? summary : undefined;
  } catch {
    return undefined;
  }
}
