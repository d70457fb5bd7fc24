import type { ChildProcess } from 'node:child_process';

/**
 * The processes tests start (runGex, startGex, startServe), so none outlives what started it: a test
 * that fails or times out leaves its children running, and a mocha worker would wait on them or
 * leave them behind. The root hooks (root-hooks.ts) kill those of a failed test and, at the end of
 * each test file, any still running; the worker's exit kills the rest.
 */
const running = new Map<ChildProcess, number>();
/** counts tests: a child belongs to the test (or hook) running when it was started */
let epoch = 0;

export function track<T extends ChildProcess>(child: T): T {
  if (child.exitCode !== null || child.signalCode !== null) return child;
  running.set(child, epoch);
  child.once('exit', () => running.delete(child));
  return child;
}

/** A new test starts: children started from now on are its own. */
export function nextTest(): void {
  epoch++;
}

/** Kills (SIGKILL) the children started since the current test began, or every one; returns how many. */
export function killChildren(which: 'test' | 'all'): number {
  let killed = 0;
  for (const [child, started] of running) {
    if (which === 'test' && started !== epoch) continue;
    running.delete(child);
    if (child.kill('SIGKILL')) killed++;
  }
  return killed;
}

/** Lets children a test already signalled (a server sent SIGTERM in an `after`) end for up to `graceMs`. */
export async function stopping(graceMs = 5_000): Promise<void> {
  const ending = [...running.keys()].filter((child) => child.killed);
  if (ending.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(ending.map((child) => new Promise((resolve) => child.once('exit', resolve)))),
    new Promise((resolve) => (timer = setTimeout(resolve, graceMs))),
  ]);
  clearTimeout(timer);
}

process.on('exit', () => killChildren('all'));
