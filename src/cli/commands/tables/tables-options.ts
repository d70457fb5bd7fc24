import type { Argv } from 'yargs';
import type { OpenedStore } from '../../../store/open-config-store.js';
import { embeddedTableSource, type TableSource } from '../../../store/table-source.js';
import { runCliAction } from '../../store-commands/command-runner.js';
import { openStoreFromArgs, storeOptions, type StoreArgs } from '../../options/store-options.js';

/** The options every `gex tables` sub-command takes. */
interface TablesArgs extends StoreArgs {
  json: boolean;
}

/** `--store` and its kin, and `--json`. */
export const tablesOptions = <T>(y: Argv<T>) =>
  storeOptions(y).option('json', { type: 'boolean', default: false, describe: 'print JSON' }) as Argv<T & TablesArgs>;

/** Runs `work` with the tables of the store the arguments name: the embedded store's database, or a Storage API's table API. */
export function withTables(
  args: StoreArgs,
  work: (tables: TableSource, location: string, opened: OpenedStore) => Promise<void>,
): Promise<void> {
  return runCliAction(async (logger) => {
    const opened = await openStoreFromArgs(args, logger, { mustExist: true });
    try {
      const source = opened.kind === 'remote' ? opened.remoteTables : embeddedTableSource(opened.tables);
      await work(source, opened.location, opened);
    } finally {
      await opened.close();
    }
  });
}
