import { gexBin } from './cli.js';
import { startGex, type GexProcess } from './gex-process.js';

/** A word for `sh -c`: single-quoted, quotes inside closed and reopened. */
function shellWord(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * Runs `gex` on a pseudo-terminal of `columns` × 40 through util-linux `script` (node-pty has no
 * prebuilt binaries for Linux): stdout and stderr are the terminal, and the output is what the
 * terminal received, byte for byte (with `\n` turned into `\r\n` by the terminal).
 */
export function startGexInTerminal(
  args: string[],
  env: NodeJS.ProcessEnv,
  columns = 120,
  options: { input?: boolean } = {},
): GexProcess {
  const command = `stty cols ${columns} rows 40; exec ${[process.execPath, gexBin, ...args].map(shellWord).join(' ')}`;
  // -q no banner, -f flush at once, -e the command's exit code, /dev/null: no typescript file
  // with `input`, what the test writes to the child's stdin is typed on the terminal
  return startGex([], env, { command: ['script', '-qfec', command, '/dev/null'], input: options.input });
}
