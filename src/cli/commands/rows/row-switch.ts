import { displayId } from '../../../common/log-text.js';
import type { Row } from '../../../store/types.js';
import { rowToWire } from '../../../store/wire/configurations.js';
import { print, type StoreCommandArgs, say, withStore } from '../../store-commands/store-command.js';
import { namedRows } from './row-options.js';

/** The handler of `gex rows enable` and `gex rows disable`: each named row's isDisabled, one version each. */
export function setDisabled(isDisabled: boolean) {
  return (args: StoreCommandArgs & { 'config-id': string; 'row-id'?: string[] }) =>
    withStore(args, async (store) => {
      const changed: Row[] = [];
      for (const rowId of await namedRows(store, args['component-id'], args['config-id'], args['row-id'])) {
        changed.push(
          await store.updateRow(args['component-id'], args['config-id'], rowId, {
            isDisabled,
            changeDescription: `Row ${rowId} ${isDisabled ? 'disabled' : 'enabled'}`,
          }),
        );
      }
      if (args.json) return print(changed.map((r) => rowToWire(r)));
      for (const r of changed)
        say(
          `Row ${displayId(r.id)} of configuration ${displayId(args['config-id'])} ${isDisabled ? 'disabled' : 'enabled'}.`,
        );
    });
}
