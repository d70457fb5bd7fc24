import { readFile } from 'node:fs/promises';
import type { Argv } from 'yargs';
import { UserError } from '../../common/errors.js';
import { decodeJson, JsonSyntaxError } from '../../json/index.js';
import { isRemoteStore, resolveStoreLocation } from '../../store/store-location.js';
import { builtinComponents } from '../builtin-components.js';
import { runCliAction } from '../command-runner.js';

interface ImportArgs {
  file: string;
  store?: string;
}

/** `gex components import FILE`: registers components (Keboola's shape) in the embedded store. */
export function componentsCommand(yargs: Argv): Argv {
  return yargs.command('components <action>', 'Manage the component registry of the embedded store', (y) =>
    y
      .command<ImportArgs>(
        'import <file>',
        'Register the components of a JSON file (an array of components as the Keboola API lists them)',
        (c) =>
          c
            .positional('file', { type: 'string', demandOption: true })
            .option('store', { type: 'string', describe: 'the embedded store: a SQLite file or a postgres:// URL ($GEX_STORE, else gex-store.sqlite)' }) as Argv<ImportArgs>,
        (args) =>
          runCliAction(async () => {
            const location = resolveStoreLocation(args.store);
            if (isRemoteStore(location)) throw new UserError('Components are registered in the embedded store: pass --store with a SQLite file or a postgres:// URL');
            let list;
            try {
              list = decodeJson(await readFile(args.file, 'utf8'));
            } catch (e) {
              if (e instanceof JsonSyntaxError) throw new UserError(`${args.file} is not valid JSON: ${e.message}`);
              if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new UserError(`No such file: ${args.file}`);
              throw e;
            }
            const { openEmbeddedStore } = await import('../../store/open-store.js');
            const backend = await openEmbeddedStore(location, process.env, { builtinComponents: builtinComponents() });
            try {
              const ids = await backend.importComponents(list);
              process.stdout.write(`Registered ${ids.length} component${ids.length === 1 ? '' : 's'}: ${ids.join(', ')}\n`);
            } finally {
              await backend.close();
            }
          }),
      )
      .demandCommand(1),
  );
}
