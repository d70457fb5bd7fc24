import type { Argv } from 'yargs';
import { UserError } from '../../../common/errors.js';
import { displayId, displayText } from '../../../common/log-text.js';
import type { DeliveryView } from '../../notifications/notifications-backend.js';
import { integerOption } from '../../options/option-checks.js';
import { printList } from '../../output/list-output.js';
import { print, say } from '../../store-commands/store-command.js';
import { onNotifications, type NotificationsArgs } from './notifications-options.js';
import { deliveryFields } from './subscription-fields.js';

/** An event's lines: one per attempt, the newest first; one saying it waits when none was made yet. */
function lines(d: DeliveryView): string[][] {
  const head = (time: string) => [displayId(time), displayId(d.subscriptionId), displayId(d.event), displayId(d.jobId)];
  if (d.attempts.length === 0) return [[...head(d.created), '-', displayId(d.status), '-', 'no attempt yet']];
  return [...d.attempts].reverse().map((a, i) => [
    ...head(a.started),
    String(a.attempt),
    displayId(a.outcome),
    a.statusCode === null ? '-' : String(a.statusCode),
    displayText(
      a.message +
        // the newest attempt of an event still retried says when the next one is due
        (i === 0 && d.status === 'pending' && d.nextAttempt ? ` (next attempt ${d.nextAttempt})` : ''),
    ),
  ]);
}

/** `gex notifications deliveries` */
export function notificationsDeliveriesCommand(y: Argv<NotificationsArgs>): Argv<NotificationsArgs> {
  return y.command(
    'deliveries',
    'What was sent: every attempt of the newest events, with its outcome and the answer',
    (c) =>
      c
        .option('subscription', { type: 'string', describe: "only this subscription's events" })
        .option('limit', integerOption('limit', { min: 1, max: 1000, default: 100, describe: 'events to show' })),
    (args) =>
      onNotifications(args, async (notifications) => {
        const subscription: unknown = args.subscription;
        if (Array.isArray(subscription))
          throw new UserError('GEX_CLI_USAGE', `--subscription takes one value, got ${subscription.length}`);
        const list = await notifications.deliveries({ subscriptionId: args.subscription, limit: Number(args.limit) });
        if (args.json) return print(list.map(deliveryFields));
        if (list.length === 0) return say('No deliveries yet');
        printList(
          ['TIME', 'SUBSCRIPTION', 'EVENT', 'JOB', 'ATTEMPT', 'OUTCOME', 'STATUS', 'MESSAGE'],
          list.flatMap(lines),
        );
      }),
  );
}
