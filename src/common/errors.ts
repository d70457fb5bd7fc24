import {
  ERROR_CATALOGUE,
  isErrorCode,
  type ApplicationErrorCode,
  type ErrorCode,
  type ErrorType,
  type UserErrorCode,
} from './error-catalogue.js';

export type { ErrorCode } from './error-catalogue.js';

/** gex's exit codes, which orchestrators rely on (Keboola's contract); a stop by a signal exits 128 + its number. */
export const EXIT_SUCCESS = 0;
/** a user error: bad configuration, the API refused */
export const EXIT_USER_ERROR = 1;
/** an application error: a bug or an environment problem */
export const EXIT_APPLICATION_ERROR = 2;

/**
 * Error kinds and their exit codes (EXIT_USER_ERROR, EXIT_APPLICATION_ERROR).
 * Each error carries its code of the catalogue (error-catalogue.ts) as `gexCode`: `code` is taken
 * by Node's system errors and by Keboola's error bodies (StoreError), both with another meaning.
 */
export class UserError extends Error {
  readonly exitCode = EXIT_USER_ERROR;
  constructor(
    readonly gexCode: UserErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'UserError';
  }
}

/** A configuration problem: where it is, what is wrong and how to fix it. */
export class ConfigError extends UserError {
  constructor(
    readonly path: string,
    readonly problem: string,
    readonly fix?: string,
  ) {
    super('GEX_CONFIG_INVALID', `Invalid configuration at ${path}: ${problem}${fix ? `. ${fix}` : ''}`);
    this.name = 'ConfigError';
  }
}

/** An internal fault: a bug or an environment problem rather than the user's input. */
export class ApplicationError extends Error {
  readonly exitCode = EXIT_APPLICATION_ERROR;
  constructor(
    readonly gexCode: ApplicationErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ApplicationError';
  }
}

export type ErrorKind = ErrorType;

export function errorKind(err: unknown): ErrorKind {
  return err instanceof UserError ? 'user' : 'application';
}

export function exitCodeOf(err: unknown): typeof EXIT_USER_ERROR | typeof EXIT_APPLICATION_ERROR {
  return err instanceof UserError ? EXIT_USER_ERROR : EXIT_APPLICATION_ERROR;
}

/**
 * The catalogue code of what was thrown: its own, or GEX_INTERNAL for anything gex did not expect
 * (a bug), whose kind is `application` too. A user error's code is always a user code.
 */
export function errorCode(err: unknown): ErrorCode {
  const code = (err as { gexCode?: unknown } | null)?.gexCode;
  if (!isErrorCode(code)) return 'GEX_INTERNAL';
  // an error that is not a UserError exits 2: its code must be an application code to agree
  return (ERROR_CATALOGUE[code].type === 'user') === err instanceof UserError ? code : 'GEX_INTERNAL';
}

/** An error as the run summary (and a job's result) reports it. */
export interface ErrorReport {
  kind: ErrorKind;
  code: ErrorCode;
  message: string;
}

export function errorReport(err: unknown): ErrorReport {
  return { kind: errorKind(err), code: errorCode(err), message: (err as Error).message };
}

/** The fields a log line about a failure carries, so a log system can filter on them. */
export function errorLogFields(err: unknown): { errorKind: ErrorKind; code: ErrorCode } {
  return { errorKind: errorKind(err), code: errorCode(err) };
}
