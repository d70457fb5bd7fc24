import type { Argv } from 'yargs';
import { displayText, quoteForLog } from '../common/log-text.js';

/** Options of the top level that take a value (the value is not a command). */
const VALUE_OPTIONS = new Set(['--log-level', '--log-format']);

/** The first word of the command line that is no option: the command the user meant to name. */
export function commandWord(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') return args[i + 1];
    if (VALUE_OPTIONS.has(arg)) i++;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

/**
 * yargs' failure handler: a mistyped command gets one line (`Unknown command "rnu". Did you mean
 * "run"?`) and a hint instead of the whole help, exit 1. Every other failure is reported as yargs
 * does (help, then the message), exit 1; errors thrown by a command go on to the caller.
 */
export function failHandler(args: readonly string[], commands: readonly string[]) {
  return (message: string | undefined, error: Error | undefined, yargs: Argv): void => {
    if (error) throw error;
    const word = commandWord(args);
    const suggestion = /^Did you mean (\S+)\?$/.exec(message ?? '')?.[1];
    if (word !== undefined && !commands.includes(word) && (suggestion || message === `Unknown argument: ${word}`)) {
      // the word is the user's text: quoted so that it cannot break the line
      const shown = quoteForLog(word);
      process.stderr.write(`Unknown command ${shown}.${suggestion ? ` Did you mean "${suggestion}"?` : ''}\n`);
      process.stderr.write(`Run "gex --help" for the list of commands (${commands.join(', ')}).\n`);
    } else {
      yargs.showHelp((text: string) => process.stderr.write(`${text}\n`));
      if (message) process.stderr.write(`\n${displayText(message)}\n`);
    }
    process.exit(1);
  };
}
