import got from 'got';
import type { Logger } from '../../common/logger.js';
import { excerpt } from '../../common/log-text.js';
import { DELIVERY_ID_HEADER } from '../notifications/webhook-sender.js';
import { NOTIFICATION_LEASE_MS, type DueNotification } from './flow-runs.js';

/** Records a notification task's outcome (undefined: sent) and takes its flow's next step. */
export type RecordNotification = (rootJobId: number, taskId: string, failure: string | undefined) => Promise<void>;

const TIMEOUT_MS = 10_000;
/** a whole delivery (every recipient, every retry) ends well inside the lease of a notification in flight */
const DELIVERY_MS = Math.min(30_000, NOTIFICATION_LEASE_MS / 2);

/**
 * Sends a flow's notification tasks after the commit that made them due: a webhook gets a JSON
 * POST per recipient (Keboola's shape: the flow's job, project, branch, the task's title and
 * message) with a delivery id header, the same when a lost delivery is sent again, so a receiver
 * can drop the repeat. A task's e-mail recipients are not sent to yet: such a task fails with that reason.
 */
export class FlowNotifications {
  constructor(private readonly logger: Logger) {}

  send(due: readonly DueNotification[], record: RecordNotification): void {
    for (const notification of due) {
      void this.deliver(notification)
        .then((failure) => record(notification.rootJobId, notification.taskId, failure))
        .catch((error: unknown) =>
          this.logger.warn(
            `Flow job ${notification.rootJobId}: notification task not recorded: ${(error as Error).message}`,
          ),
        );
    }
  }

  /** Undefined when every recipient accepted it; else why not. */
  private async deliver(n: DueNotification): Promise<string | undefined> {
    if (n.channel === 'email')
      return "a flow's e-mail notification tasks are not sent by gex: use a webhook, or a Notification API e-mail subscription (docs/notifications.md)";
    const body = {
      eventType: 'flow-notification',
      title: n.title,
      message: n.message,
      job: { id: String(n.rootJobId), component: { id: n.flow.componentId }, configuration: { id: n.flow.configId } },
      branch: { id: '1' },
      project: { id: String(n.flow.projectId) },
    };
    const deadline = AbortSignal.timeout(DELIVERY_MS);
    for (const url of n.recipients) {
      try {
        await got.post(url, {
          json: body,
          headers: { [DELIVERY_ID_HEADER]: `flow-${n.rootJobId}-task-${encodeURIComponent(n.taskId)}` },
          signal: deadline,
          timeout: { request: TIMEOUT_MS },
          retry: { limit: 2 },
          followRedirect: false,
        });
      } catch (error) {
        return `the webhook ${excerpt(new URL(url).origin, 200)} refused it: ${excerpt((error as Error).message, 300)}`;
      }
    }
    return undefined;
  }
}
