import { RunCancelled, signalExitCode, type StopSignal } from '../../common/cancellation.js';

const STOP_SIGNALS: StopSignal[] = ['SIGINT', 'SIGTERM'];

let installed = false;
let controller: AbortController | null = null;
let received: StopSignal | undefined;

/**
 * Installs SIGINT/SIGTERM handlers for the whole CLI. Without a command asking for a graceful stop
 * (cancelOnStop), a signal ends the process at once with 128 + its number — what the default action
 * would do, but explicit: node running as PID 1 (a container without an init) gets no default
 * signal actions, so without handlers SIGTERM would be ignored.
 */
export function installStopSignals(): void {
  if (installed) return;
  installed = true;
  for (const signal of STOP_SIGNALS) process.on(signal, () => onSignal(signal));
}

function onSignal(signal: StopSignal): void {
  if (controller && !received) {
    received = signal;
    controller.abort(new RunCancelled(signal));
    return;
  }
  // no graceful stop asked for, or a second signal during the cleanup: exit now ('exit' listeners
  // still run, e.g. the one removing run locks)
  process.exit(signalExitCode(received ?? signal));
}

/**
 * From now on the first SIGINT/SIGTERM aborts the returned signal (reason: RunCancelled) so the
 * command can stop cleanly; a second one still exits at once.
 */
export function cancelOnStop(): AbortSignal {
  installStopSignals();
  controller ??= new AbortController();
  return controller.signal;
}

/** Resolves with the first SIGINT or SIGTERM (a second one exits at once): how a server or worker waits. */
export function untilStopSignal(): Promise<string> {
  const signal = cancelOnStop();
  return new Promise((resolve) => {
    const stop = () => resolve((signal.reason as RunCancelled).signal);
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
}
