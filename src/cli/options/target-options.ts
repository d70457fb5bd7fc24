import type { Argv } from 'yargs';
import type { LoggingArgs } from '../process/logging.js';
import { GENERIC_EXTRACTOR_ID } from '../builtin-components.js';
import { splitIdList } from './id-list.js';

/** What `gex run` and `gex check` work on: a data folder, or a stored configuration in a store. */
export interface TargetArgs extends LoggingArgs {
  /** absent: the default (see defaultDataDir in data-dir-default.ts), resolved when the command starts */
  'data-dir'?: string;
  'config-id'?: string;
  'component-id': string;
  'row-id': string[];
  store?: string;
  token?: string;
}

const env = process.env;

/** The options naming a target, with the Keboola variables as defaults; `verb` says what is done to it ("run", "check"). */
export function targetOptions<T>(yargs: Argv<T>, verb: string): Argv<T & TargetArgs> {
  return yargs
    .option('data-dir', {
      type: 'string',
      defaultDescription:
        '$KBC_DATADIR, else ./data if it exists, else /data if inside a container and it exists, else ./data',
      describe: 'the data folder (Keboola common interface)',
    })
    .option('config-id', {
      type: 'string',
      default: env.KBC_CONFIGID || undefined,
      defaultDescription: '$KBC_CONFIGID',
      describe: `${verb} this stored configuration`,
    })
    .option('component-id', {
      type: 'string',
      default: env.KBC_COMPONENTID || GENERIC_EXTRACTOR_ID,
      defaultDescription: `$KBC_COMPONENTID or ${GENERIC_EXTRACTOR_ID}`,
    })
    .option('row-id', {
      type: 'string',
      array: true,
      default: splitIdList(env.KBC_CONFIGROWID),
      coerce: splitIdList,
      defaultDescription: '$KBC_CONFIGROWID',
      describe: `${verb} only this row (repeatable or a comma list); disabled rows named here too`,
    })
    .option('store', {
      type: 'string',
      describe:
        'a SQLite file, a postgres:// database or an http(s) Storage API (else $KBC_URL, $GEX_STORE, gex-store.sqlite)',
    })
    .option('token', { type: 'string', describe: 'Storage API token for a remote store ($KBC_TOKEN)' }) as Argv<
    T & TargetArgs
  >;
}
