import type { Argv } from 'yargs';
import { UserError } from '../../../common/errors.js';
import { displayId } from '../../../common/log-text.js';
import type { ConfigStore } from '../../../store/config-store.js';
import { storeCommandOptions } from '../../store-commands/store-command.js';

/** The options of a rows sub-command: the store's, and the configuration. */
export const withConfig = <T>(c: Argv<T>) =>
  storeCommandOptions(c).positional('config-id', { type: 'string', demandOption: true });

/** The rows named with --row-id (at least one), each checked to exist before anything changes. */
export async function namedRows(
  store: ConfigStore,
  componentId: string,
  configId: string,
  rowIds: string[] | undefined,
): Promise<string[]> {
  if (!rowIds?.length) throw new UserError('GEX_CLI_USAGE', 'Name the rows with --row-id (repeatable or a comma list)');
  const existing = new Set((await store.listRows(componentId, configId)).map((r) => r.id));
  const unknown = rowIds.filter((id) => !existing.has(id));
  if (unknown.length)
    throw new UserError(
      'GEX_ROW_NOT_FOUND',
      `Configuration ${displayId(configId)} has no row ${unknown.map(displayId).join(', ')}: nothing was changed`,
    );
  return rowIds;
}
