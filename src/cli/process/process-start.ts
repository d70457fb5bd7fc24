import { missingStartFlags } from '../../common/heap-growth.js';
import { commandWord } from './command-word.js';
import { enableCompileCache } from './compile-cache.js';

type Execve = (file: string, args: string[], env: NodeJS.ProcessEnv) => never;

/**
 * A `gex run` needs compiler flags that V8 reads only as it starts (RUN_MEMORY.startFlags: on V8
 * 12+, a peak of 85–94 MB instead of 128–136 MB): started without them, it replaces itself once
 * with the same node, flags and arguments plus those (`process.execve`, Node ≥ 22.15: the same
 * process and pid, no second one). Where node cannot (older Node 22), the run goes on as it is.
 */
export function restartWithRunFlags(argv: readonly string[] = process.argv): void {
  if (commandWord(argv.slice(2)) !== 'run') return;
  const flags = missingStartFlags(process.execArgv, process.env.NODE_OPTIONS);
  const execve = (process as unknown as { execve?: Execve }).execve;
  if (flags.length === 0 || typeof execve !== 'function') return;
  try {
    execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...argv.slice(1)], process.env);
  } catch {
    // not replaced (the node binary cannot be run again): the run goes on without the flags
  }
}

/** What every gex process does before its code is loaded (bin/gex.js). */
export function startProcess(): void {
  restartWithRunFlags();
  enableCompileCache();
}
