import type { Argv } from 'yargs';
import { say } from '../../store-commands/store-command.js';
import { onNotifications, type NotificationsArgs } from './notifications-options.js';

/** `gex notifications remove <id>` */
export function notificationsRemoveCommand(y: Argv<NotificationsArgs>): Argv<NotificationsArgs> {
  return y.command(
    'remove <id>',
    'Delete a subscription (its delivery records stay; events not yet sent to it are not sent)',
    (c) => c.positional('id', { type: 'string', demandOption: true }),
    (args) =>
      onNotifications(args, async (notifications) => {
        await notifications.remove(args.id);
        say(`Subscription ${args.id} removed`);
      }),
  );
}
