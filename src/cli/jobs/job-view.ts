import { displayText } from '../../common/log-text.js';
import { formatSeconds, groupThousands, plural } from '../../common/text.js';
import { readJobRunCounts, type JobRunCounts, type JobTableCounts } from '../../jobs/job-metrics.js';
import { isJsonObject, stringifyExact, toPlain, type JsonObject, type JsonValue } from '../../json/index.js';

/**
 * What `gex jobs` prints of a job, read from the Queue API's job object — the same wire shape on
 * the embedded store (`jobToWire`) and from a server, so both modes print alike. A server's
 * answer is not trusted to have the right types: every field is read defensively.
 */
export interface JobView {
  id: string;
  runId: string;
  status: string;
  component: string;
  config: string;
  configRowIds: string[];
  created: string;
  durationSeconds: number | null;
  isFinished: boolean;
  /** the result's message, once finished */
  message?: string;
  /** `user` or `application` when the job failed */
  errorType?: string;
  /** `standard`, or a flow's `orchestrationContainer` (its root) or `phaseContainer`; '' when not said */
  type: string;
  parentRunId: string;
  /** a flow's task job: the task's id in the flow ('' otherwise) */
  orchestrationTaskId: string;
  /** a flow's phase job: the phase's id (its `configData.phaseId`; '' otherwise) */
  phaseId: string;
  /** what the run moved (`metrics.gex`: gex's counts), once finished */
  counts?: JobRunCounts;
  /** `metrics.storage` of a job without gex's counts (Keboola's): the bytes its tables read and wrote */
  storageBytes?: { input: number | null; output: number | null };
  /** the job object as it came, for `--json` */
  wire: JsonObject;
}

const FINISHED = new Set(['success', 'error', 'warning', 'terminated', 'cancelled']);

function text(value: JsonValue | undefined): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : stringifyExact(value);
}

/** The view of a job object; `undefined` when `wire` is no job object (no id, no status). */
export function jobView(wire: JsonValue): JobView | undefined {
  if (!isJsonObject(wire)) return undefined;
  const id = text(wire.get('id'));
  const status = text(wire.get('status'));
  if (!/^\d{1,15}$/.test(id) || status === '') return undefined;
  const result = wire.get('result');
  const error = isJsonObject(result) ? result.get('error') : undefined;
  const rows = wire.get('configRowIds');
  const duration = toPlain(wire.get('durationSeconds') ?? null);
  const configData = wire.get('configData');
  const metrics = wire.get('metrics');
  const counts = isJsonObject(metrics) ? readJobRunCounts(toPlain(metrics.get('gex') ?? null)) : undefined;
  return {
    id,
    runId: text(wire.get('runId')),
    status,
    component: text(wire.get('component')),
    config: text(wire.get('config')),
    configRowIds: Array.isArray(rows) ? rows.map(text) : [],
    created: text(wire.get('createdTime')),
    durationSeconds: typeof duration === 'number' ? duration : null,
    isFinished: wire.get('isFinished') === true || FINISHED.has(status),
    message: isJsonObject(result) && result.has('message') ? text(result.get('message')) : undefined,
    errorType: isJsonObject(error) ? text(error.get('type')) : undefined,
    type: text(wire.get('type')),
    parentRunId: text(wire.get('parentRunId')),
    orchestrationTaskId: text(wire.get('orchestrationTaskId')),
    phaseId: isJsonObject(configData) ? text(configData.get('phaseId')) : '',
    ...(counts ? { counts } : {}),
    ...(!counts && isJsonObject(metrics) ? storageBytesOf(metrics.get('storage')) : {}),
    wire,
  };
}

/** Keboola's `metrics.storage`: its byte sums, each null when it is no count. */
function storageBytesOf(storage: JsonValue | undefined): Pick<JobView, 'storageBytes'> {
  if (!isJsonObject(storage)) return {};
  const bytes = (key: string) => {
    const value = toPlain(storage.get(key) ?? null);
    return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
  };
  const input = bytes('inputTablesBytesSum');
  const output = bytes('outputTablesBytesSum');
  return input === null && output === null ? {} : { storageBytes: { input, output } };
}

/** A job's cells in a list: id, status, what runs, when it was created and how long it took. */
export function jobCells(job: JobView): string[] {
  const f = displayText;
  const rows = job.configRowIds.length ? ` rows ${job.configRowIds.map(f).join(',')}` : '';
  const took = job.durationSeconds === null ? '' : ` ${job.durationSeconds}s`;
  return [job.id, f(job.status), `${f(job.component)} ${f(job.config)}${rows}`, `${f(job.created)}${took}`];
}

/** One line: the cells of jobCells, tab-separated. */
export function jobLine(job: JobView): string {
  return jobCells(job).join('\t');
}

/** A job as `gex jobs run|show|kill` print it: its line and result message, or its JSON. */
export function printJob(job: JobView, json: boolean, out: (text: string) => void): void {
  if (json) return out(`${stringifyExact(job.wire)}\n`);
  out(`${jobLine(job)}\n`);
  if (job.message !== undefined) out(`  ${displayText(job.message)}\n`);
  for (const line of countLines(job)) out(`  ${line}\n`);
}

const tableCells = (t: { tables: number; rows: number; bytes: number }) =>
  `${plural(t.tables, 'table')} (${plural(t.rows, 'row')}, ${plural(t.bytes, 'byte')})`;

function tableLine(table: JobTableCounts, read: boolean): string {
  const name = displayText(table.tableId ?? table.file);
  return `  ${read ? 'read ' : ''}${name}: ${plural(table.rows, 'row')}, ${plural(table.bytes, 'byte')}`;
}

/** What a job moved, for people: the totals, then each row listed with its tables (docs/jobs.md#what-a-job-moved). */
export function countLines(job: Pick<JobView, 'counts' | 'storageBytes'>): string[] {
  const c = job.counts;
  if (!c) {
    const s = job.storageBytes;
    if (!s) return [];
    const sum = (n: number | null) => (n === null ? 'unknown' : plural(n, 'byte'));
    return [`Storage: input tables ${sum(s.input)}, output tables ${sum(s.output)}`];
  }
  // a configuration without rows runs once: no row lines, its tables under the totals
  const rowless = c.rows.length === 1 && c.rows[0].id === null && c.rowsNotListed === 0;
  const skipped = c.rowsSkipped > 0 ? ` (${groupThousands(c.rowsSkipped)} skipped)` : '';
  const rowsRun = rowless ? '' : `${plural(c.rowsRun, 'row')} run${skipped}, `;
  const lines = [
    `Moved: ${rowsRun}${plural(c.requests, 'request')}, ${plural(c.records, 'record')} in ${formatSeconds(c.durationMs)}`,
    `Tables: wrote ${tableCells({ tables: c.outputTables, rows: c.outputRows, bytes: c.outputBytes })}` +
      (c.inputTables > 0
        ? `, read ${tableCells({ tables: c.inputTables, rows: c.inputRows, bytes: c.inputBytes })}`
        : ''),
  ];
  for (const row of c.rows) {
    if (!rowless)
      lines.push(
        row.status === 'skipped' || row.status === 'not run'
          ? `Row ${displayText(row.id ?? '')}: ${row.status}`
          : `Row ${displayText(row.id ?? '')}: ${row.status}, ${plural(row.requests, 'request')}, ${plural(row.records, 'record')} in ${formatSeconds(row.durationMs)}`,
      );
    for (const table of row.inputTables) lines.push(tableLine(table, true));
    for (const table of row.tables) lines.push(tableLine(table, false));
  }
  if (c.rowsNotListed > 0 || c.tablesNotListed > 0)
    lines.push(
      `Not listed: ${plural(c.rowsNotListed, 'row')}, ${plural(c.tablesNotListed, 'table')} (the totals count them)`,
    );
  return lines;
}

/** 0 success, 1 a user error, 2 an application error, 143 killed or cancelled */
export function exitCodeOfJob(job: Pick<JobView, 'status' | 'errorType'>): number {
  if (job.status === 'success' || job.status === 'warning') return 0;
  if (job.status === 'terminated' || job.status === 'cancelled') return 143;
  return job.errorType === 'user' ? 1 : 2;
}

/** A line of a job's log, in either mode (`created` as the Queue API writes times). */
export interface LogLine {
  created: string;
  level: string;
  message: string;
}

export function logLine(line: LogLine): string {
  return `${displayText(line.created)} ${displayText(line.level.toUpperCase())} ${displayText(line.message)}`;
}
