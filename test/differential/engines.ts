import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runGexInProcess } from '../support/in-process-gex.js';

/** A program that runs a Keboola data folder: the reference GE or gex. */
export interface Engine {
  name: string;
  run(dataDir: string, timeoutMs: number): Promise<EngineRun>;
}

export interface EngineRun {
  code: number;
  /** its output (the last 200 KB) */
  log: string;
  timedOut: boolean;
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The environment variable naming the command that runs the reference GE on a data folder. */
export const GE_REFERENCE_VARIABLE = 'GEX_GE_REFERENCE';

export function referenceCommand(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const command = env[GE_REFERENCE_VARIABLE];
  return command && command.trim() !== '' ? command : undefined;
}

/** The reference GE: `$GEX_GE_REFERENCE DATA_DIR` (a script such as the reference's run.sh). */
export function referenceEngine(command: string): Engine {
  return { name: 'ge', run: (dataDir, timeoutMs) => runProcess(command, [dataDir], timeoutMs) };
}

/** gex as users run it: the built CLI on the data folder. */
export function gexEngine(): Engine {
  return {
    name: 'gex',
    run: (dataDir, timeoutMs) =>
      runProcess(process.execPath, [path.join(root, 'bin', 'gex.js'), 'run', '--data-dir', dataDir], timeoutMs),
  };
}

/**
 * gex run inside this process (the test suite's runGexInProcess): what the regression tests replay
 * many cases with, sparing a process start per case. A run past `timeoutMs` is reported timed out
 * but cannot be killed: it finishes in the background.
 */
export function gexInProcessEngine(): Engine {
  return {
    name: 'gex',
    run: async (dataDir, timeoutMs) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<EngineRun>((resolve) => {
        timer = setTimeout(() => resolve({ code: -1, log: '', timedOut: true }), timeoutMs);
      });
      const run = runGexInProcess(['run', '--data-dir', dataDir], { LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' }).then(
        (r): EngineRun => ({ code: r.code, log: r.output.slice(-200_000), timedOut: false }),
      );
      try {
        return await Promise.race([run, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

function runProcess(command: string, args: string[], timeoutMs: number): Promise<EngineRun> {
  return new Promise((resolve) => {
    // detached: a timeout kills the whole process group (run.sh execs PHP, but be sure)
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      env: { ...process.env, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' },
    });
    let log = '';
    const keep = (chunk: Buffer) => {
      log = (log + chunk.toString('utf8')).slice(-200_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: -1, log: `${log}\n${error.message}`, timedOut });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : -1), log, timedOut });
    });
  });
}

/** The last lines of a log, each cut short and without PHP's stack traces, for a report. */
export function logTail(log: string, lines = 12): string {
  return log
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(-lines)
    .map((line) => {
      const trace = line.indexOf(' {"errFile"');
      const short = trace > 0 ? line.slice(0, trace) : line;
      return short.length > 400 ? `${short.slice(0, 400)}…` : short;
    })
    .join('\n');
}
