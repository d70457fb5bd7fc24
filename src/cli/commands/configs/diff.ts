import type { Argv } from 'yargs';
import { displayId } from '../../../common/log-text.js';
import { fromPlain } from '../../../json/index.js';
import { positiveInt, print, say, storeCommandOptions, withExistingStore } from '../../store-commands/store-command.js';
import { changeLines, versionChanges } from '../../input/version-diff.js';

/** `gex configs diff <id> <from> [to]` */
export function configsDiffCommand(y: Argv): Argv {
  return y.command(
    'diff <id> <from> [to]',
    'Show what changed between two versions of a configuration (name, body, rows, their order); [to]: the current version',
    (c) =>
      storeCommandOptions(c)
        .positional('id', { type: 'string', demandOption: true })
        .positional('from', { type: 'string', demandOption: true, describe: 'version number' })
        .positional('to', { type: 'string', describe: 'version number (default: the current version)' }),
    (args) =>
      withExistingStore(args, async (store) => {
        const componentId = args['component-id'];
        const from = positiveInt(args.from, 'version');
        const to =
          args.to === undefined
            ? (await store.getConfiguration(componentId, args.id)).version
            : positiveInt(args.to, 'version');
        const [before, after] = await Promise.all([
          store.getConfigurationVersion(componentId, args.id, from),
          store.getConfigurationVersion(componentId, args.id, to),
        ]);
        const changes = versionChanges(before, after);
        if (args.json) return print(fromPlain({ id: args.id, from, to, changes }));
        if (changes.length === 0)
          return say(`Versions ${from} and ${to} of configuration ${displayId(args.id)} hold the same.`);
        say(`Configuration ${displayId(args.id)}, version ${from} → version ${to}:`);
        for (const line of changeLines(changes)) say(line);
      }),
  );
}
