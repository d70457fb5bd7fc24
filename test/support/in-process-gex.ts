import { Console } from 'node:console';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import type { CliResult } from './cli.js';
import { gexBin, repoRoot } from './cli.js';

/**
 * `gex ARGS` run inside the test process: the built CLI's `main` (the bundle bin/gex.js loads), with
 * what a process would have to itself — environment, working folder, stdout, stderr, an empty stdin,
 * process.exit and the exit code, the process's 'exit' listeners — swapped in for the run and put
 * back after it. A process start costs a few hundred milliseconds of CPU; this costs the command.
 *
 * Only for tests of a command's output, exit code and effects. Whatever concerns the process itself
 * (signals, locks between processes, standard input, a terminal, start-up, another uid) runs the
 * real binary (runGex). Runs are serialized: a process-wide swap admits one command at a time.
 * A process gex starts with inherited stdio (an $EDITOR) writes to the test process's own output.
 */
export function runGexInProcess(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  options: { cwd?: string } = {},
): Promise<CliResult & { output: string }> {
  const run = queue.then(() => runOnce(args, env, options));
  queue = run.catch(() => undefined);
  return run;
}

let queue: Promise<unknown> = Promise.resolve();
let loaded: Promise<(argv: string[]) => Promise<void>> | undefined;

/** The `main` bin/gex.js runs: the bundle, or the compiled tree without it. */
function loadMain(): Promise<(argv: string[]) => Promise<void>> {
  const bundle = path.join(repoRoot, 'dist', 'bundle', 'main.js');
  const entry = existsSync(bundle) ? bundle : path.join(repoRoot, 'dist', 'src', 'cli', 'main.js');
  loaded ??= import(pathToFileURL(entry).href).then((m: { main: (argv: string[]) => Promise<void> }) => m.main);
  return loaded;
}

/** Thrown by the stand-in process.exit: it ends the command where a real exit would. */
class ProcessExit extends Error {
  constructor(readonly code: number) {
    super(`process.exit(${code})`);
  }
}

/** A stand-in stdout/stderr: a pipe, not a terminal (as for a spawned gex), collecting what is written. */
function collector(sink: (text: string) => void): Writable {
  return new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, callback) {
      sink(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
      callback();
    },
  });
}

const PROCESS_EVENTS = ['beforeExit', 'exit', 'SIGINT', 'SIGTERM'] as const;
type Swapped = 'stdout' | 'stderr' | 'stdin';

async function runOnce(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { cwd?: string },
): Promise<CliResult & { output: string }> {
  let stdout = '';
  let stderr = '';
  // both, in the order written (as one pipe for both would have them)
  let output = '';
  let exited: number | undefined;
  // after process.exit only the 'exit' listeners still write: what the unwinding command would write is lost
  let writable = true;
  const out = collector((text) => {
    if (!writable) return;
    stdout += text;
    output += text;
  });
  const err = collector((text) => {
    if (!writable) return;
    stderr += text;
    output += text;
  });

  const savedEnv = { ...process.env };
  const savedCwd = process.cwd();
  const savedExit = process.exit;
  const savedConsole = globalThis.console;
  const savedStreams = new Map<Swapped, PropertyDescriptor>();
  const emitter: NodeJS.EventEmitter = process;
  const listenersBefore = new Map(PROCESS_EVENTS.map((e) => [e, new Set(emitter.listeners(e))]));
  const swap = (name: Swapped, stream: unknown) => {
    savedStreams.set(name, Object.getOwnPropertyDescriptor(process, name)!);
    Object.defineProperty(process, name, { configurable: true, enumerable: true, get: () => stream });
  };
  try {
    // in place: modules keep a reference to process.env; spawn leaves out an undefined value, so do we
    for (const [key, value] of Object.entries(env)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    if (options.cwd !== undefined) process.chdir(options.cwd);
    swap('stdout', out);
    swap('stderr', err);
    swap('stdin', Readable.from([]));
    // yargs prints help and its messages with console.log/error: the global console holds the old streams
    globalThis.console = new Console({ stdout: out, stderr: err });
    process.exitCode = undefined;
    process.exit = (code?: number | string | null) => {
      exited ??= Number(code ?? process.exitCode ?? 0);
      writable = false;
      throw new ProcessExit(exited);
    };

    try {
      // loaded with the stand-ins in place: a module that keeps process.stdin from its start keeps one
      // that is no terminal, as a spawned gex's is not
      const main = await loadMain();
      await main([process.execPath, gexBin, ...args]);
    } catch (error) {
      // what bin/gex.js does with an error main lets through
      if (exited === undefined && !(error instanceof ProcessExit)) {
        err.write(`${error instanceof Error ? error.stack : String(error)}\n`);
        exited = 2;
      }
    }
    const code = exited ?? Number(process.exitCode ?? 0);
    // the process ends: its 'beforeExit' listeners run (a run's GC observer stops; not after process.exit),
    // then its 'exit' listeners (batched output flushed, lock and spool files removed)
    writable = true;
    const ending = exited === undefined ? (['beforeExit', 'exit'] as const) : (['exit'] as const);
    for (const event of ending)
      for (const listener of emitter.listeners(event))
        if (!listenersBefore.get(event)!.has(listener)) (listener as (code: number) => void)(code);
    writable = false;
    return { code, stdout, stderr, output };
  } finally {
    for (const event of PROCESS_EVENTS)
      for (const listener of emitter.listeners(event))
        if (!listenersBefore.get(event)!.has(listener)) emitter.removeListener(event, listener as () => void);
    process.exit = savedExit;
    // gex run tunes the GC of its process (heap growth, young generation): not the test process's, so
    // back to V8's defaults (no test runs node with either flag)
    v8.setFlagsFromString('--heap-growing-percent=0');
    v8.setFlagsFromString('--semi-space-growth-factor=2');
    globalThis.console = savedConsole;
    process.exitCode = undefined;
    for (const [name, descriptor] of savedStreams) Object.defineProperty(process, name, descriptor);
    if (process.cwd() !== savedCwd) process.chdir(savedCwd);
    for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
    Object.assign(process.env, savedEnv);
  }
}
