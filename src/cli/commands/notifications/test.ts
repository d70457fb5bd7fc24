import type { Argv } from 'yargs';
import { displayText } from '../../../common/log-text.js';
import { fields, print, say } from '../../store-commands/store-command.js';
import { onNotifications, type NotificationsArgs } from './notifications-options.js';

/** `gex notifications test <id>` */
export function notificationsTestCommand(y: Argv<NotificationsArgs>): Argv<NotificationsArgs> {
  return y.command(
    'test <id>',
    "Send a sample of the subscription's event to its recipient now (not recorded, not retried) and say how it went",
    (c) => c.positional('id', { type: 'string', demandOption: true }),
    (args) =>
      onNotifications(args, async (notifications) => {
        const { outcome, statusCode, message } = await notifications.test(args.id);
        if (args.json) print(fields({ outcome, statusCode, message }));
        else
          say(
            `Subscription ${args.id}: sample ${outcome === 'delivered' ? 'delivered' : 'not delivered'}` +
              `${statusCode === null ? '' : ` (${statusCode})`}: ${displayText(message)}`,
          );
        // a recipient that did not take it: exit 1, as a refused command
        if (outcome !== 'delivered') process.exitCode = 1;
      }),
  );
}
