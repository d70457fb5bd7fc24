import assert from 'node:assert/strict';
import { runGex, type CliResult } from './cli.js';
import { runGexInProcess } from './in-process-gex.js';

/** A secret that tests put into configurations: it must never appear in any output of gex. */
export const SECRET = 'hunter2-plain-secret';

/**
 * Runs store commands with fixed environment and keeps every output, so a test can check at the
 * end that no secret leaked into any of them. Commands run in this process (runGexInProcess), but
 * for one that reads standard input: that one runs the real binary with `input` on its stdin.
 */
export class StoreCli {
  readonly outputs: string[] = [];

  /** `cwd`: the folder the commands run in (default this process's) */
  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly cwd?: string,
  ) {}

  /** `input`: what the command reads on standard input (none by default) */
  async run(args: string[], env: NodeJS.ProcessEnv = {}, input?: string): Promise<CliResult> {
    const result = readsStdin(args, input)
      ? await runGex(args, { ...this.env, ...env }, { cwd: this.cwd, input })
      : await runGexInProcess(args, { ...this.env, ...env }, { cwd: this.cwd });
    this.outputs.push(result.stdout, result.stderr);
    return result;
  }

  /** Runs and expects exit 0; returns stdout. */
  async ok(args: string[], env: NodeJS.ProcessEnv = {}, input?: string): Promise<string> {
    const result = await this.run(args, env, input);
    assert.equal(result.code, 0, `gex ${args.join(' ')} failed: ${result.stderr}`);
    return result.stdout;
  }

  /** Runs with --json and parses stdout. */
  async json<T = any>(args: string[], env: NodeJS.ProcessEnv = {}, input?: string): Promise<T> {
    return JSON.parse(await this.ok([...args, '--json'], env, input)) as T;
  }

  /** Runs and expects exit 1; returns stderr. */
  async fails(args: string[], env: NodeJS.ProcessEnv = {}, input?: string): Promise<string> {
    const result = await this.run(args, env, input);
    assert.equal(
      result.code,
      1,
      `gex ${args.join(' ')} should fail with 1, got ${result.code}: ${result.stdout}${result.stderr}`,
    );
    return result.stderr;
  }

  assertNoSecretLeaked(secret = SECRET): void {
    assert.ok(this.outputs.length > 0);
    for (const output of this.outputs)
      assert.ok(!output.includes(secret), `the secret appeared in an output:\n${output}`);
  }
}

/** Given input, `-` for a file, or a --set-secret (read from stdin when it is no terminal). */
function readsStdin(args: string[], input: string | undefined): boolean {
  return input !== undefined || args.some((a) => a === '-' || a.endsWith('=-') || a.startsWith('--set-secret'));
}
