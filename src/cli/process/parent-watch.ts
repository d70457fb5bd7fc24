import { PARENT_PID_VARIABLE } from '../../jobs/job-run-contract.js';

/**
 * A `gex run` started by a job worker must never outlive it: the worker names itself in
 * GEX_JOB_PARENT_PID, and once this process's parent is another one (the worker died, even by
 * kill -9, and the process was re-parented) the run stops as on SIGTERM — no state is saved.
 */
const CHECK_MS = 250;

export function stopWhenParentGone(env: NodeJS.ProcessEnv = process.env): void {
  const expected = Number(env[PARENT_PID_VARIABLE]);
  if (!Number.isSafeInteger(expected) || expected <= 0) return;
  const check = () => {
    if (process.ppid === expected) return;
    clearInterval(timer);
    process.kill(process.pid, 'SIGTERM');
  };
  const timer = setInterval(check, CHECK_MS);
  // never what keeps the process alive
  timer.unref();
  check();
}
