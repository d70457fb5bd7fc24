import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { track } from './children.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const gexBin = path.join(repoRoot, 'bin', 'gex.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real `gex` binary (built output) as a separate process (in `options.cwd`, default this
 * one's; as `options.uid`/`gid` when given — a test running as root plays another user so), with
 * `options.input` on its standard input (none by default).
 */
export function runGex(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  options: { cwd?: string; uid?: number; gid?: number; input?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    const stdin: 'ignore' | 'pipe' = options.input === undefined ? 'ignore' : 'pipe';
    const child = track(
      spawn(process.execPath, [gexBin, ...args], {
        env: { ...process.env, ...env },
        stdio: [stdin, 'pipe', 'pipe'],
        cwd: options.cwd,
        uid: options.uid,
        gid: options.gid,
      }),
    );
    // a command that does not read its input may end first: the pipe breaking then is no error
    child.stdin?.on('error', () => undefined);
    if (options.input !== undefined) child.stdin?.end(options.input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Starts `gex serve` and resolves with the address it logs once listening. */
export function startServe(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = track(
    spawn(process.execPath, [gexBin, 'serve', '--port', '0', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = /listening on (http:\/\/[^\s/]+)\/v2\/storage/.exec(output);
      if (match) resolve({ child, url: match[1], output: () => output });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`gex serve exited with ${code}: ${output}`)));
  });
}
