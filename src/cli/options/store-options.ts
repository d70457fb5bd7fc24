import type { Argv } from 'yargs';
import type { Logger } from '../../common/logger.js';
import { builtinComponents, GENERIC_EXTRACTOR_ID } from '../builtin-components.js';
import type { OpenedStore } from '../../store/open-config-store.js';
import { storeLocationFromArgs } from '../../store/store-location.js';
import type { GivenToken } from '../../store/remote/api-index.js';

export interface StoreArgs {
  store?: string;
  token?: string;
  project?: string;
}

export interface ComponentArgs extends StoreArgs {
  'component-id': string;
}

/** `--store` (a SQLite file, a PostgreSQL URL or an http(s) Storage API), `--token`, `--project`. */
export function storeOptions<T>(yargs: Argv<T>): Argv<T & StoreArgs> {
  return yargs
    .option('store', {
      type: 'string',
      describe:
        'the embedded store (a SQLite file or a postgres:// URL) or the http(s) address of a Storage API ($KBC_URL, else $GEX_STORE, else gex-store.sqlite)',
    })
    .option('token', { type: 'string', describe: 'Storage API token for a remote store ($KBC_TOKEN)' })
    .option('project', {
      type: 'string',
      describe: 'project of the embedded store when used without a token (default: "default")',
    });
}

export function componentOption<T>(yargs: Argv<T>): Argv<T & { 'component-id': string }> {
  return yargs.option('component-id', {
    type: 'string',
    default: process.env.KBC_COMPONENTID || GENERIC_EXTRACTOR_ID,
    defaultDescription: `$KBC_COMPONENTID or ${GENERIC_EXTRACTOR_ID}`,
    describe: 'component of the configuration',
  });
}

/** `--token`, else `$KBC_TOKEN`: the one place a command takes its token from. */
export function tokenFromArgs(args: { token?: string }, env: NodeJS.ProcessEnv = process.env): GivenToken {
  if (args.token !== undefined) return { token: args.token, tokenOrigin: '--token' };
  return env.KBC_TOKEN ? { token: env.KBC_TOKEN, tokenOrigin: 'KBC_TOKEN' } : {};
}

/** `mustExist`: the command only reads, so it neither creates a store nor its key file. */
export async function openStoreFromArgs(
  args: StoreArgs,
  logger?: Logger,
  options: { mustExist?: boolean } = {},
): Promise<OpenedStore> {
  const [{ openConfigStore }, { INTERACTIVE_STORE_RETRY }] = await Promise.all([
    import('../../store/open-config-store.js'),
    import('../../store/remote/retry-budget.js'),
  ]);
  // a person is waiting: a remote store that does not answer fails within seconds, not minutes
  return openConfigStore(storeLocationFromArgs(args.store), {
    ...tokenFromArgs(args),
    project: args.project,
    logger,
    mustExist: options.mustExist,
    remoteRetry: INTERACTIVE_STORE_RETRY,
    builtinComponents: builtinComponents(),
  });
}
