/**
 * What `gex check` and `gex run --dry-run` find, as data: the text and the JSON output are both
 * rendered from it. Every text in it is masked when it is made (secrets hidden); control
 * characters are escaped when it is rendered.
 */

/** A request as it would be sent: the first of a top-level job. */
export interface RequestPreview {
  method: string;
  url: string;
  headers: Array<[string, string]>;
  body?: string;
  /** what the preview cannot show (a login request, a signature made when sending) */
  notes: string[];
}

/** The answer to a first request sent by `gex check --request`. */
export interface ProbeResult {
  status?: number;
  statusMessage?: string;
  ms: number;
  /** bytes of the body once decompressed */
  bytes?: number;
  /** records found (at `dataField`, or where GE looks without one) */
  records?: number;
  /** with no records found: the top-level keys of the response, to choose a dataField from */
  topLevelKeys?: string[];
  /** the CSV tables (and their columns) this page would produce */
  tables?: Array<{ table: string; columns: string[] }>;
  /** the request failed (exit 1) */
  error?: string;
  /** the response was read but not analysed in full */
  warning?: string;
}

export interface JobCheck {
  /** 1-based, null without `iterations` */
  iteration: number | null;
  job: string;
  request?: RequestPreview;
  response?: ProbeResult;
}

/** One configuration checked: a data folder, a stored configuration without rows, or one row. */
export interface UnitCheck {
  label: string;
  rowId: string | null;
  /** false: a disabled row a run skips — checked and reported, but what is wrong with it fails nothing */
  runs: boolean;
  /** passes every check a run makes before its first request */
  valid: boolean;
  /** why it is not valid; `code` is the catalogue's (docs/errors.md) */
  error?: { message: string; path?: string; code: string };
  warnings: string[];
  jobs: JobCheck[];
  /** a stored configuration's: where each table goes and why, where input tables come from */
  tables?: string[];
}

export interface CheckReport {
  /** every unit a run runs valid, and every request sent for one answered */
  ok: boolean;
  units: UnitCheck[];
  /** problems of the whole check (a disabled configuration) */
  warnings: string[];
}

/** The unit is valid and every first request sent for it was answered. */
export function unitOk(unit: UnitCheck): boolean {
  return unit.valid && unit.jobs.every((j) => j.response?.error === undefined);
}

/** Every unit a run would run is fine; a disabled row's problems are reported, not counted. */
export function reportOk(units: UnitCheck[]): boolean {
  return units.every((u) => !u.runs || unitOk(u));
}
