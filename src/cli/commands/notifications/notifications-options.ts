import { runCliAction } from '../../store-commands/command-runner.js';
import { EmbeddedNotifications } from '../../notifications/embedded-notifications.js';
import { RemoteNotifications } from '../../notifications/remote-notifications.js';
import type { NotificationsBackend } from '../../notifications/notifications-backend.js';
import { notificationSettings } from '../../options/notification-options.js';
import { openStoreFromArgs, tokenFromArgs, type StoreArgs } from '../../options/store-options.js';

/** The options every `gex notifications` sub-command takes (the tree's). */
export interface NotificationsArgs extends StoreArgs {
  json: boolean;
}

/** Runs `work` with the notifications of the store the arguments name: the embedded store, or a server's API. */
export function onNotifications(
  args: NotificationsArgs,
  work: (notifications: NotificationsBackend) => Promise<void>,
): Promise<void> {
  return runCliAction(async (logger) => {
    const opened = await openStoreFromArgs(args, logger, { mustExist: true });
    try {
      const notifications =
        opened.kind === 'remote'
          ? await RemoteNotifications.open(opened.location, tokenFromArgs(args), process.env, logger)
          : // a sample is sent with the relay of $GEX_SMTP_URL and $GEX_SMTP_FROM, as a server would
            await EmbeddedNotifications.open(opened.backend, args.project, logger, () =>
              notificationSettings({}, process.env),
            );
      try {
        await work(notifications);
      } finally {
        await notifications.close();
      }
    } finally {
      await opened.close();
    }
  });
}
