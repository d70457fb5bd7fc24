import { lstatSync, mkdirSync } from 'node:fs';
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';

/** The folder of this user's own where gex keeps V8's compiled code of its modules. */
export function compileCacheFolder(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME?.startsWith('/') ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(base, 'gex', 'compile-cache');
}

/** Whether `dir` is a real folder of this user that nobody else may write (not a link). */
function privateFolder(dir: string): boolean {
  const found = lstatSync(dir);
  const mine = process.getuid === undefined || found.uid === process.getuid();
  return found.isDirectory() && mine && (found.mode & 0o022) === 0;
}

/**
 * Node ≥ 22.1 can keep V8's compiled code of the modules a process loads for the next start
 * (`module.enableCompileCache`): gex starts ~20% sooner on Node 24 (npm run bench). What the cache
 * holds is code the next run executes, so it lives only in a folder of this user's own — made
 * mode 0700, used only when it and its parent are this user's, not links and writable by nobody
 * else — never in the shared temporary folder Node would take by default. `GEX_COMPILE_CACHE=0`
 * turns it off, and Node's own `NODE_COMPILE_CACHE` / `NODE_DISABLE_COMPILE_CACHE` win. A cache
 * that cannot be had (no home, a read-only disk, Node 20) changes nothing: gex starts as before.
 * Returns the folder used, or undefined.
 */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const enable = (module as { enableCompileCache?: (dir: string) => { status: number } }).enableCompileCache;
  if (typeof enable !== 'function') return undefined;
  if (env.GEX_COMPILE_CACHE === '0' || env.NODE_DISABLE_COMPILE_CACHE || env.NODE_COMPILE_CACHE) return undefined;
  try {
    const dir = compileCacheFolder(env);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!privateFolder(path.dirname(dir)) || !privateFolder(dir)) return undefined;
    const { status } = enable(dir);
    const { ENABLED, ALREADY_ENABLED } = (
      module as unknown as { constants: { compileCacheStatus: Record<string, number> } }
    ).constants.compileCacheStatus;
    return status === ENABLED || status === ALREADY_ENABLED ? dir : undefined;
  } catch {
    return undefined;
  }
}
