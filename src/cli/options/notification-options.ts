import type { Argv } from 'yargs';
import { UserError } from '../../common/errors.js';
import type { NotificationSettings } from '../../jobs/job-platform.js';
import { EmailSender } from '../../jobs/notifications/email-sender.js';
import { parseSmtpSettings, SMTP_SETTING_NAMES } from '../../jobs/notifications/smtp-settings.js';

/** The options of whatever delivers notifications: `gex serve` and `gex worker`. */
export interface NotificationArgs {
  'public-url'?: string;
}

export const PUBLIC_URL_VARIABLE = 'GEX_PUBLIC_URL';

export function notificationOptions<T>(y: Argv<T>): Argv<T & NotificationArgs> {
  return y.option('public-url', {
    type: 'string',
    defaultDescription: `$${PUBLIC_URL_VARIABLE}`,
    describe:
      "the console's address as its users reach it (https://gex.example.com): notifications link to a job's page under it",
  });
}

/** An http(s) origin (a path prefix allowed), without credentials, query or fragment. */
function publicUrlOf(text: string, name: string): string {
  const refuse = (what: string): never => {
    throw new UserError('GEX_SETTING_INVALID', `${name} must be ${what} (for example https://gex.example.com)`);
  };
  if (text.length > 2048 || /[\s\p{Cc}]/u.test(text)) refuse('a URL of at most 2048 characters without spaces');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse('an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') refuse('an http:// or https:// URL');
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    refuse('a URL without credentials, query or fragment');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * The delivery settings of a server or worker: the public URL (the option, $GEX_PUBLIC_URL, else
 * `fallback`), and the SMTP relay from $GEX_SMTP_URL and $GEX_SMTP_FROM (the environment only: a
 * password on the command line would be seen by every user of the machine). Bad values are
 * refused before anything starts.
 */
export function notificationSettings(
  args: NotificationArgs,
  env: NodeJS.ProcessEnv,
  fallbackPublicUrl?: string,
): NotificationSettings {
  const given = args['public-url'] ?? env[PUBLIC_URL_VARIABLE];
  const name = args['public-url'] !== undefined ? '--public-url' : `$${PUBLIC_URL_VARIABLE}`;
  const publicUrl = given !== undefined && given !== '' ? publicUrlOf(given, name) : fallbackPublicUrl;
  const smtpUrl = env[SMTP_SETTING_NAMES.url];
  const from = env[SMTP_SETTING_NAMES.from];
  if (smtpUrl === undefined || smtpUrl === '') {
    if (from)
      throw new UserError(
        'GEX_SETTING_INVALID',
        `$${SMTP_SETTING_NAMES.from} is set but $${SMTP_SETTING_NAMES.url} is not: set the relay too (smtp://host:587)`,
      );
    return { publicUrl };
  }
  if (!from)
    throw new UserError(
      'GEX_SETTING_INVALID',
      `$${SMTP_SETTING_NAMES.url} is set but $${SMTP_SETTING_NAMES.from} is not: set the sender's address (gex@example.com)`,
    );
  return { publicUrl, email: new EmailSender(parseSmtpSettings({ url: smtpUrl, from })) };
}
