/**
 * Error kinds and the exit codes orchestrators rely on (Keboola's contract):
 * 0 success, 1 user error (bad configuration, the API refused), 2 application error.
 */
export class UserError extends Error {
  readonly exitCode = 1 as const;
  constructor(message: string, options?: { cause?: unknown }) {
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
    super(`Invalid configuration at ${path}: ${problem}${fix ? `. ${fix}` : ''}`);
    this.name = 'ConfigError';
  }
}

/** An internal fault: a bug or an environment problem rather than the user's input. */
export class ApplicationError extends Error {
  readonly exitCode = 2 as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ApplicationError';
  }
}

export type ErrorKind = 'user' | 'application';

export function errorKind(err: unknown): ErrorKind {
  return err instanceof UserError ? 'user' : 'application';
}

export function exitCodeOf(err: unknown): 1 | 2 {
  return err instanceof UserError ? 1 : 2;
}
