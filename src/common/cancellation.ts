import { constants } from 'node:os';

export type StopSignal = 'SIGINT' | 'SIGTERM';

/** The exit code of a process stopped by `signal`, as a shell reports it: 128 + the signal number. */
export function signalExitCode(signal: StopSignal): number {
  return 128 + constants.signals[signal];
}

/**
 * The reason a run was stopped (a SIGTERM or SIGINT): thrown wherever the run notices its
 * AbortSignal, so every layer unwinds through its normal cleanup (spools, staging, locks).
 */
export class RunCancelled extends Error {
  constructor(readonly signal: StopSignal) {
    super(`The run was cancelled by ${signal}`);
    this.name = 'RunCancelled';
  }

  get exitCode(): number {
    return signalExitCode(this.signal);
  }
}

/** The cancellation behind `signal`, if it was aborted by a stop signal. */
export function cancellationOf(signal: AbortSignal | undefined): RunCancelled | undefined {
  return signal?.aborted && signal.reason instanceof RunCancelled ? signal.reason : undefined;
}
