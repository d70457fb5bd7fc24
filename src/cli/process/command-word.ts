/** Options of the top level that take a value (the value is not a command). */
const VALUE_OPTIONS = new Set(['--log-level', '--log-format', '--log-file']);

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
