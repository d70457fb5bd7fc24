import type { Argv } from 'yargs';
import { UserError } from '../../common/errors.js';
import { isRemoteStore, resolveStoreLocation } from '../../store/store-location.js';
import { builtinComponents } from '../builtin-components.js';
import { runCliAction } from '../command-runner.js';

interface CreateArgs {
  description: string;
  'read-only': boolean;
  project?: string;
  store?: string;
}

/** `gex tokens create`: a Storage API token of the embedded store, printed once. */
export function tokensCommand(yargs: Argv): Argv {
  return yargs.command('tokens <action>', 'Manage tokens of the embedded store', (y) =>
    y
      .example('$0 tokens create --description ci --store gex-store.sqlite', 'a token for the CI; printed once')
      .example('$0 tokens create --description dashboard --read-only', 'a token that may only read')
      .command<CreateArgs>(
        'create',
        'Create a token and print it (only a hash is stored; it is shown this once)',
        (c) =>
          c
            .option('description', { type: 'string', demandOption: true, describe: 'who or what the token is for' })
            .option('read-only', { type: 'boolean', default: false, describe: 'may read configurations but not change them' })
            .option('project', { type: 'string', describe: 'project the token belongs to (created if new; default "default")' })
            .option('store', { type: 'string', describe: 'the embedded store: a SQLite file or a postgres:// URL ($GEX_STORE, else gex-store.sqlite)' }) as Argv<CreateArgs>,
        (args) =>
          runCliAction(async () => {
            const location = resolveStoreLocation(args.store);
            if (isRemoteStore(location)) throw new UserError('Tokens are created in the embedded store: pass --store with a SQLite file or a postgres:// URL');
            const { openEmbeddedStore } = await import('../../store/open-store.js');
            const backend = await openEmbeddedStore(location, process.env, { builtinComponents: builtinComponents() });
            try {
              const { token, info } = await backend.createToken({ description: args.description, readOnly: args['read-only'], project: args.project });
              process.stdout.write(`${token}\n`);
              process.stderr.write(`Token ${info.id} "${info.description}" of project "${info.projectName}"${info.readOnly ? ' (read-only)' : ''} created. Store it now: it is not shown again.\n`);
            } finally {
              await backend.close();
            }
          }),
      )
      .demandCommand(1),
  );
}
