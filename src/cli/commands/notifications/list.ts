import type { Argv } from 'yargs';
import { displayId } from '../../../common/log-text.js';
import { printList } from '../../output/list-output.js';
import { print, say } from '../../store-commands/store-command.js';
import { onNotifications, type NotificationsArgs } from './notifications-options.js';
import { filtersText, recipientText, subscriptionFields } from './subscription-fields.js';

/** `gex notifications list` */
export function notificationsListCommand(y: Argv<NotificationsArgs>): Argv<NotificationsArgs> {
  return y.command(
    'list',
    "List the project's subscriptions: event, filters, recipient (a webhook's query values hidden)",
    (c) => c,
    (args) =>
      onNotifications(args, async (notifications) => {
        const list = await notifications.list();
        if (args.json) return print(list.map(subscriptionFields));
        if (list.length === 0)
          return say('No subscriptions (gex notifications add --event job-failed --webhook URL | --email ADDRESS)');
        printList(
          ['ID', 'EVENT', 'FILTERS', 'RECIPIENT', 'CREATED'],
          list.map((s) => [
            displayId(s.id),
            displayId(s.event),
            filtersText(s),
            recipientText(s),
            displayId(s.created),
          ]),
        );
      }),
  );
}
