import { UserError } from '../../common/errors.js';
import { quoteForLog } from '../../common/log-text.js';
import { NAME_MAX_BYTES, unsafeFileNameProblem } from '../../common/safe-path.js';

/**
 * How output buckets and table names become file names in `out/tables`, and which ones cannot.
 * Buckets and table names come from configurations (outputBucket, dataType, endpoint, mappings)
 * and from API responses (keys become child tables): every one is checked here before a file is
 * named after it. Odd but safe names (dots, spaces, unicode) are kept exactly as GE writes them.
 */

/**
 * gex's own folders in out/tables while tables are completed (removed at the end of the run): no
 * table file may take their names.
 */
export const WORK_FOLDERS = { staging: '.gex-staging', parts: '.gex-parts' } as const;

/** The longest of a table's files: its manifest. */
const MANIFEST_SUFFIX = '.manifest';

/** The CSV file of a table: `<bucket>.<table>`, or `<table>` in the default bucket (null). */
export function tableFileName(bucket: string | null, table: string): string {
  return bucket === null ? table : `${bucket}.${table}`;
}

/**
 * Why a bucket name cannot be part of a file name (null when it can): a safe file name itself that
 * leaves room for a one-byte table name (`<bucket>.t.manifest`).
 */
export function bucketNameProblem(bucket: string): string | null {
  const problem = unsafeFileNameProblem(bucket);
  if (problem) return problem;
  const bytes = Buffer.byteLength(bucket, 'utf8');
  const room = NAME_MAX_BYTES - '.t'.length - MANIFEST_SUFFIX.length;
  if (bytes > room)
    return `is ${bytes} bytes long: with ".<table>.manifest" its files' names would be over the file system's limit of ${NAME_MAX_BYTES} bytes (at most ${room} bytes leave room for a table name)`;
  return null;
}

/**
 * Why the files of `table` in `bucket` cannot be written (null when they can): the table name must
 * be a safe file name on its own (not empty, no NUL, no `/` or `\`, not `.` or `..`), and the
 * manifest's name, the longest, must fit the file system's limit.
 */
export function tableFileProblem(bucket: string | null, table: string): string | null {
  if (bucket !== null) {
    const problem = bucketNameProblem(bucket);
    if (problem) return `the bucket name ${quoteName(bucket)} ${problem}`;
  }
  const problem = unsafeFileNameProblem(table);
  if (problem) return `the table name ${quoteName(table)} ${problem}`;
  const file = tableFileName(bucket, table);
  if (file === WORK_FOLDERS.staging || file === WORK_FOLDERS.parts)
    return `the table file name ${quoteName(file)} is reserved for gex's work folder in out/tables`;
  const manifest = file + MANIFEST_SUFFIX;
  const bytes = Buffer.byteLength(manifest, 'utf8');
  if (bytes > NAME_MAX_BYTES) {
    return `the table's manifest file ${quoteName(manifest)} would be ${bytes} bytes long, over the file system's limit of ${NAME_MAX_BYTES} bytes per file name`;
  }
  return null;
}

/** A name as messages show it: quoted as log lines quote hostile text, long ones cut. */
export function quoteName(name: string): string {
  const text = quoteForLog(name);
  return text.length > 80 ? `${text.slice(0, 60)}…"` : text;
}

/** A table name taken from an API response that cannot be a file name. */
export class TableNameError extends UserError {
  constructor(message: string) {
    super('GEX_RESPONSE_NOT_TABULAR', message);
    this.name = 'TableNameError';
  }
}

/**
 * Called by a parser when it creates a table: `table` is the name it derived, `origin` the raw
 * path it derived it from (data type, then response keys, joined with `.`).
 */
export type TableNameCheck = (table: string, origin: string) => void;

/** The check for the tables a parser of `bucket` derives from response keys. */
export function responseTableNameCheck(bucket: string | null): TableNameCheck {
  const checked = new Set<string>();
  return (table, origin) => {
    if (checked.has(table)) return;
    const problem = tableFileProblem(bucket, table);
    if (problem) {
      throw new TableNameError(
        `Cannot write the table of the response path ${quoteName(origin)} (the data type, then the response keys): ${problem}. ` +
          'Name the data with config.mappings, pick a narrower dataField, or shorten outputBucket and dataType',
      );
    }
    checked.add(table);
  };
}
