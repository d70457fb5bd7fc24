import type { Argv } from 'yargs';

/** One sub-command of a command tree (`gex tables list`): adds itself, builder and handler, to the tree. */
export type SubCommand<T> = (tree: Argv<T>) => Argv<T>;

/** The tree with its sub-commands added in this order (the order --help lists them in). */
export function withSubCommands<T>(tree: Argv<T>, subCommands: readonly SubCommand<T>[]): Argv<T> {
  return subCommands.reduce((built, add) => add(built), tree);
}
