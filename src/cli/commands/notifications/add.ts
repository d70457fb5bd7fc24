import type { Argv } from 'yargs';
import { UserError } from '../../../common/errors.js';
import { displayId, excerptQuoted } from '../../../common/log-text.js';
import { fromPlain } from '../../../json/index.js';
import {
  FILTER_FIELDS,
  FILTER_OPERATORS,
  MAX_FILTERS,
  SUBSCRIPTION_EVENTS,
  subscriptionInput,
  type SubscriptionInput,
} from '../../../jobs/notifications/subscription-input.js';
import { SIGNATURE_HEADER } from '../../../jobs/notifications/webhook-sender.js';
import { StoreError } from '../../../store/store-error.js';
import { runCliAction } from '../../store-commands/command-runner.js';
import { print, say } from '../../store-commands/store-command.js';
import { onNotifications, type NotificationsArgs } from './notifications-options.js';
import { filtersText, recipientText, subscriptionFields } from './subscription-fields.js';

interface AddArgs extends NotificationsArgs {
  event: string;
  webhook?: string;
  email?: string;
  config?: string;
  component?: string;
  filter?: string[];
}

type Filter = { field: string; operator: string; value: string | number };

/** `--filter 'FIELD OP VALUE'`: a number where one is compared (an operator other than ==, the overrun). */
function filterArg(text: string): Filter {
  const found = /^\s*([^\s<>=]+)\s*(==|<=|>=|<|>)\s*(\S(?:.*\S)?)\s*$/s.exec(text);
  if (!found)
    throw new UserError(
      'GEX_CLI_USAGE',
      `--filter takes 'FIELD OP VALUE' (FIELD one of ${FILTER_FIELDS.join(', ')}; OP one of ${FILTER_OPERATORS.join(' ')}), got ${excerptQuoted(text)}`,
    );
  const [, field, operator, raw] = found;
  const numeric =
    /^-?\d{1,15}(\.\d{1,15})?$/.test(raw) && (operator !== '==' || field === 'durationOvertimePercentage');
  return { field, operator, value: numeric ? Number(raw) : raw };
}

/**
 * The subscription the options describe, checked as the Notification API checks a body
 * (subscriptionInput); a refusal names the option that gave the value.
 */
export function inputFromArgs(args: AddArgs): SubscriptionInput {
  for (const name of ['event', 'webhook', 'email', 'config', 'component'] as const) {
    const value: unknown = args[name];
    if (Array.isArray(value))
      throw new UserError(
        'GEX_CLI_USAGE',
        `--${name} takes one value, got ${value.length}: add one subscription for each`,
      );
  }
  if (args.webhook === undefined && args.email === undefined)
    throw new UserError('GEX_CLI_USAGE', 'Name the recipient: --webhook URL or --email ADDRESS');
  if (args.webhook !== undefined && args.email !== undefined)
    throw new UserError(
      'GEX_CLI_USAGE',
      '--webhook and --email exclude each other: a subscription has one recipient (add one of each)',
    );
  const filters: Array<{ filter: Filter; from: string }> = [];
  if (args.config !== undefined)
    filters.push({
      filter: { field: 'job.configuration.id', operator: '==', value: args.config },
      from: `--config ${displayId(args.config.slice(0, 100))}`,
    });
  if (args.component !== undefined)
    filters.push({
      filter: { field: 'job.component.id', operator: '==', value: args.component },
      from: `--component ${displayId(args.component.slice(0, 100))}`,
    });
  for (const text of args.filter ?? [])
    filters.push({ filter: filterArg(text), from: `--filter ${excerptQuoted(text)}` });
  const body = {
    event: args.event,
    filters: filters.map((f) => f.filter),
    recipient:
      args.webhook !== undefined
        ? { channel: 'webhook', url: args.webhook }
        : { channel: 'email', address: args.email },
  };
  try {
    return subscriptionInput(fromPlain(body));
  } catch (error) {
    if (!(error instanceof StoreError) || !error.details?.[0]) throw error;
    const { key, message } = error.details[0];
    const at = /^filters\[(\d+)\]/.exec(key);
    const option =
      key === 'event'
        ? `--event ${excerptQuoted(args.event)}`
        : key === 'recipient.url'
          ? '--webhook'
          : key === 'recipient.address'
            ? `--email ${excerptQuoted(args.email ?? '')}`
            : key === 'filters'
              ? `${filters.length} filters (at most ${MAX_FILTERS})`
              : at
                ? `${filters[Number(at[1])].from} (${key.slice(at[0].length + 1) || 'filter'})`
                : key;
    throw new UserError('GEX_CLI_USAGE', `${option}: ${message}; nothing was added`, { cause: error });
  }
}

/** `gex notifications add --event E --webhook URL | --email ADDRESS` */
export function notificationsAddCommand(y: Argv<NotificationsArgs>): Argv<NotificationsArgs> {
  return y.command(
    'add',
    "Subscribe to the project's job events: a webhook or an e-mail when a job fails, succeeds or runs long",
    (c) =>
      c
        .option('event', {
          type: 'string',
          demandOption: true,
          describe: `the event: ${SUBSCRIPTION_EVENTS.join(', ')}`,
        })
        .option('webhook', {
          type: 'string',
          describe: 'POST the event (signed JSON) to this http(s) URL; its query values are never shown',
        })
        .option('email', {
          type: 'string',
          describe: 'e-mail the event to this address (the SMTP relay of $GEX_SMTP_URL)',
        })
        .option('config', { type: 'string', describe: "only this configuration's jobs (job.configuration.id)" })
        .option('component', { type: 'string', describe: "only this component's jobs (job.component.id)" })
        .option('filter', {
          type: 'string',
          array: true,
          describe: `more filters, each 'FIELD OP VALUE': FIELD one of ${FILTER_FIELDS.join(', ')}; OP one of ${FILTER_OPERATORS.join(' ')}`,
        }),
    (args) => {
      // checked before anything is opened: a refused subscription is stored and sent nowhere
      let input: SubscriptionInput;
      try {
        input = inputFromArgs(args);
      } catch (error) {
        return runCliAction(() => {
          throw error;
        });
      }
      return onNotifications(args, async (notifications) => {
        const { subscription, signingSecret } = await notifications.add(input);
        if (args.json) {
          const shown = subscriptionFields(subscription);
          if (signingSecret !== null) shown.set('signingSecret', signingSecret);
          return print(shown);
        }
        say(
          `Subscription ${displayId(subscription.id)} added: ${displayId(subscription.event)}` +
            (subscription.filters.length ? ` (${filtersText(subscription)})` : '') +
            ` to ${recipientText(subscription)}`,
        );
        if (signingSecret !== null)
          say(
            `Signing secret (shown once, never again: keep it now): ${signingSecret}\n` +
              `Each delivery carries ${SIGNATURE_HEADER}: sha256=<HMAC-SHA256 of the body under this secret>`,
          );
      });
    },
  );
}
