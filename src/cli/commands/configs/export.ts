import { writeFile } from 'node:fs/promises';
import type { Argv } from 'yargs';
import { UserError } from '../../../common/errors.js';
import { displayId, displayText } from '../../../common/log-text.js';
import { prettyExact } from '../../../json/index.js';
import { exportConfiguration } from '../../../store/export-configuration.js';
import { print, say, storeCommandOptions, withExistingStore } from '../../store-commands/store-command.js';

/** `gex configs export <id>` */
export function configsExportCommand(y: Argv): Argv {
  return y.command(
    'export <id>',
    'Write a configuration with its rows, order and states as the document "configs import" reads (secrets stay encrypted)',
    (c) =>
      storeCommandOptions(c).positional('id', { type: 'string', demandOption: true }).option('file', {
        type: 'string',
        describe: 'write it to this file (created, mode 0600; an existing file is not overwritten) instead of stdout',
      }),
    (args) =>
      withExistingStore(args, async (store) => {
        const document = exportConfiguration(await store.getConfiguration(args['component-id'], args.id));
        if (!args.file) return print(document);
        try {
          await writeFile(args.file, `${prettyExact(document)}\n`, { mode: 0o600, flag: 'wx' });
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'EEXIST')
            throw new UserError(
              'GEX_FILE_NOT_WRITTEN',
              `${displayText(args.file)} exists already: name a new file (export never overwrites one)`,
            );
          throw new UserError(
            'GEX_FILE_NOT_WRITTEN',
            `Cannot write ${displayText(args.file)}: ${(e as Error).message}`,
          );
        }
        say(
          `Exported configuration ${displayId(args.id)} with ${(document.get('rows') as unknown[]).length} rows to ${displayText(args.file)}.`,
        );
      }),
  );
}
