import { displayText, quoteForLog } from '../../common/log-text.js';
import { closestKey } from '../../extractor/config/closest-key.js';
import { commandWord } from '../process/command-word.js';
import { unknownOptionMessage, type KnownOptions } from './option-checks.js';

/** What yargs' failure handler gets as its third argument: the usage of the command that failed. */
interface FailedUsage {
  getUsage(): Array<[string, ...unknown[]]>;
  getCommands(): Array<[string, ...unknown[]]>;
  showHelp(print: (text: string) => void): void;
}

/** The usage line of the command that failed: `$0 configs edit <id>`. */
function usageWords(usage: FailedUsage): string[] {
  return (usage.getUsage()[0]?.[0] ?? '').split(/\s+/).filter((word) => word !== '' && word !== '$0');
}

/** The words of the command that failed (`configs edit`). */
function commandPath(usage: FailedUsage): string[] {
  return usageWords(usage).filter((word) => /^[a-z][\w-]*$/.test(word));
}

/** The word the user gave after `path` (an action that does not exist), if any. */
function wordAfter(args: readonly string[], path: readonly string[]): string | undefined {
  const words = args.filter((arg) => !arg.startsWith('-'));
  const at = words.findIndex((_, i) => path.every((p, j) => words[i + j] === p));
  return at < 0 ? undefined : words[at + path.length];
}

/**
 * yargs' failure handler, one short answer for every mistake, exit 1: a mistyped command gets
 * `Unknown command "rnu". Did you mean "run"?`, a missing or unknown action the list of actions,
 * and any other mistake (an unknown option, a missing value) the message and the command whose
 * `--help` explains it — never the whole help text, which buries the one line that matters.
 * Errors thrown by a command go on to the caller.
 */
export function failHandler(args: readonly string[], commands: readonly string[], knownOptions: () => KnownOptions) {
  // typed by yargs as its instance; what it passes is the usage of the failed command
  return (message: string | undefined, error: Error | string | undefined, failed: unknown): void => {
    // yargs' own parse errors (a missing option value) are mistakes on the command line too; a
    // check that fails gives its message as the error
    if (error instanceof Error && error.name !== 'YError') throw error;
    message ??= error instanceof Error ? error.message : error;
    // yargs' word for an option given without its value, as gex says it for every option
    const wanting = /^Not enough arguments following: (.+)$/.exec(message ?? '')?.[1];
    if (wanting !== undefined) message = `--${wanting} needs a value, and none was given`;
    // and its words for a value that is not one of an option's choices
    const choice = /^Invalid values:\s*Argument: (.+?), Given: (.+?), Choices: (.+)$/s.exec(message ?? '');
    if (choice) message = `--${choice[1]} takes one of ${choice[3]}, got ${choice[2]}`;
    const usage = failed as FailedUsage;
    const write = (line: string) => process.stderr.write(`${line}\n`);
    const word = commandWord(args);
    const suggestion = /^Did you mean (\S+)\?$/.exec(message ?? '')?.[1];
    const path = commandPath(usage);
    const actions = usage.getCommands().map(([command]) => command.split(' ')[0]);
    if (word !== undefined && !commands.includes(word) && (suggestion || message === `Unknown argument: ${word}`)) {
      // the word is the user's text: quoted so that it cannot break the line
      write(`Unknown command ${quoteForLog(word)}.${suggestion ? ` Did you mean "${suggestion}"?` : ''}`);
      write(`Run "gex --help" for the list of commands (${commands.join(', ')}).`);
    } else if (path.length === 0 && word === undefined) {
      // `gex` alone: the overview is the answer
      usage.showHelp((text) => write(text));
      if (message) write(`\n${displayText(message)}`);
    } else if (actions.length > 0 && (suggestion || /^Not enough non-option arguments/.test(message ?? ''))) {
      const given = wordAfter(args, path);
      const near = given === undefined ? undefined : closestKey(given, actions);
      write(
        given === undefined
          ? `gex ${path.join(' ')} needs an action: ${actions.join(', ')}.`
          : `Unknown action ${quoteForLog(given)} of gex ${path.join(' ')}.${near ? ` Did you mean "${near}"?` : ''} The actions are ${actions.join(', ')}.`,
      );
      write(`Run "gex ${path.join(' ')} --help" for what each does.`);
    } else if (/^Not enough non-option arguments/.test(message ?? '')) {
      const usageLine = ['gex', ...usageWords(usage)].join(' ');
      const got = Number(/got (\d+)/.exec(message ?? '')?.[1] ?? 0);
      const required = usageWords(usage)
        .filter((word) => word.startsWith('<'))
        .slice(got);
      write(
        `Error: ${required.length ? `${required.join(' ')} missing` : 'an argument is missing'}: ${displayText(usageLine)}`,
      );
      write(`Run "gex ${[...path, '--help'].join(' ')}" for its options and examples.`);
    } else if (/^Unknown arguments?: /.test(message ?? '') && unknownOptionMessage(args, knownOptions())) {
      for (const line of unknownOptionMessage(args, knownOptions())!.split('\n')) write(`Error: ${line}`);
      write(`Run "gex ${[...path, '--help'].join(' ')}" for its options and examples.`);
    } else {
      // yargs breaks some messages into lines ("Invalid values:\n  Argument: …"): one line here
      write(`Error: ${displayText((message ?? 'the command line is not valid').replace(/\s*\n\s*/g, ' '))}`);
      write(`Run "gex ${[...path, '--help'].join(' ')}" for its options and examples.`);
    }
    process.exit(1);
  };
}
