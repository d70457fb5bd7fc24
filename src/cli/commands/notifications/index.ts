import type { Argv } from 'yargs';
import { storeOptions } from '../../options/store-options.js';
import { withSubCommands } from '../sub-commands.js';
import { notificationsAddCommand } from './add.js';
import { notificationsDeliveriesCommand } from './deliveries.js';
import { notificationsListCommand } from './list.js';
import { notificationsRemoveCommand } from './remove.js';
import { notificationsTestCommand } from './test.js';

/**
 * `gex notifications add|list|remove|test|deliveries`: subscriptions to job events (Keboola's
 * Notification API), on the embedded store or through a server's Notification API.
 */
export function notificationsCommand(yargs: Argv): Argv {
  return yargs.command(
    'notifications <action>',
    'Tell a webhook or an e-mail address when jobs fail, succeed or run long (the Notification API)',
    (y) =>
      withSubCommands(
        storeOptions(y)
          .option('json', { type: 'boolean', default: false, describe: 'print JSON' })
          .example(
            '$0 notifications add --event job-failed --config shop --webhook https://hooks.example.com/gex',
            'POST to the webhook when a job of configuration shop fails',
          )
          .example('$0 notifications add --event job-failed --email ops@example.com', 'e-mail every failed job')
          .example('$0 notifications test 1', 'send subscription 1 a sample now'),
        [
          notificationsAddCommand,
          notificationsListCommand,
          notificationsRemoveCommand,
          notificationsTestCommand,
          notificationsDeliveriesCommand,
        ],
      ).demandCommand(1, 'Name an action: add, list, remove, test or deliveries'),
  );
}
