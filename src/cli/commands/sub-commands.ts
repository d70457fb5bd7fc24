import type { Argv } from 'yargs';

/** One sub-command of a command tree (`gex tables list`): adds itself, builder and handler, to the tree. */
export type SubCommand = (tree: Argv) => Argv;

/** The tree with its sub-commands added in this order (the order --help lists them in). */
export function withSubCommands(tree: Argv, subCommands: readonly SubCommand[]): Argv {
  return subCommands.reduce((built, add) => add(built), tree);
}
