import { inspect } from 'node:util';
import { UserError } from '../../common/errors.js';
import { isEmailAddress } from './subscription-input.js';

/**
 * How the connection to the relay is protected: `starttls` upgrades when the server offers
 * STARTTLS (plain text otherwise), `starttls-required` fails unless it does, `tls` is TLS from the
 * first byte (smtps://).
 */
export type SmtpSecurity = 'starttls' | 'starttls-required' | 'tls';

/** the settings' names in messages, by default the environment variables */
export interface SmtpSettingNames {
  url: string;
  from: string;
}

export const SMTP_SETTING_NAMES: SmtpSettingNames = { url: 'GEX_SMTP_URL', from: 'GEX_SMTP_FROM' };
/** submission (RFC 6409) for smtp://, implicit TLS (RFC 8314) for smtps:// */
export const SMTP_DEFAULT_PORT = 587;
export const SMTPS_DEFAULT_PORT = 465;
/** the longest relay URL accepted (it is a setting, not data) */
export const MAX_SMTP_URL = 2048;

const HIDDEN = '***';
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST_NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*\\.?$`);
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/**
 * The operator's SMTP relay and sender: what the e-mail channel connects to and sends as. The
 * password is kept in a private field: `toString`, `toJSON` and `util.inspect` show `***`.
 */
export class SmtpSettings {
  readonly #password: string | undefined;

  constructor(
    readonly host: string,
    readonly port: number,
    readonly security: SmtpSecurity,
    /** the envelope sender and the From header */
    readonly from: string,
    readonly user?: string,
    password?: string,
  ) {
    this.#password = password;
  }

  /** user and password for AUTH (PLAIN or LOGIN, as the server offers), when the URL holds them */
  credentials(): { user: string; pass: string } | undefined {
    return this.user === undefined || this.#password === undefined
      ? undefined
      : { user: this.user, pass: this.#password };
  }

  /** the relay as logs and errors may show it: `smtp://gex:***@smtp.example.com:587 (STARTTLS required)` */
  toString(): string {
    const scheme = this.security === 'tls' ? 'smtps' : 'smtp';
    const user = this.user === undefined ? '' : `${encodeURIComponent(this.user)}:${HIDDEN}@`;
    const host = this.host.includes(':') ? `[${this.host}]` : this.host;
    const how = { starttls: 'STARTTLS when offered', 'starttls-required': 'STARTTLS required', tls: 'TLS' }[
      this.security
    ];
    return `${scheme}://${user}${host}:${this.port} (${how}), from ${this.from}`;
  }

  toJSON(): string {
    return this.toString();
  }

  [inspect.custom](): string {
    return `SmtpSettings { ${this.toString()} }`;
  }
}

/**
 * The relay URL `smtp://[user:password@]host[:port][?starttls=required]` or
 * `smtps://[user:password@]host[:port]` and the From address, checked: the first problem is a
 * UserError (GEX_SETTING_INVALID) naming the setting, what it must be and the value with its
 * password hidden. With a user and password, a relay that is not on this machine gets STARTTLS
 * required: the password is never sent in plain text over a network.
 */
export function parseSmtpSettings(
  input: { url: string; from: string },
  names: SmtpSettingNames = SMTP_SETTING_NAMES,
): SmtpSettings {
  const text = input.url.trim();
  const refuse = (what: string): never => {
    throw new UserError('GEX_SETTING_INVALID', `${names.url} must be ${what}, got "${maskedSmtpUrl(text)}"`);
  };
  const shape = 'smtp://[user:password@]host[:port] or smtps://[user:password@]host[:port]';
  if (text === '') refuse(`${shape} (for example smtp://smtp.example.com:587)`);
  if (text.length > MAX_SMTP_URL) refuse(`at most ${MAX_SMTP_URL} characters`);
  // URL parsing drops tabs and line breaks silently: a value holding any control character or space is refused as it is
  if (/[\s\p{Cc}]/u.test(text)) refuse(`${shape} without spaces or control characters (percent-encode them: %20)`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse(
      `a valid URL, ${shape} with a port of 1–65535; percent-encode special characters of the user and password (@ as %40, / as %2F)`,
    );
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') refuse(`${shape} (another scheme is not an SMTP relay)`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') refuse(`a URL with a host: ${shape}, such as smtp://smtp.example.com:587`);
  const name = HOST_NAME.test(host) && !/^[\d.]+$/.test(host);
  if (!name && !IPV4.test(host) && !url.hostname.startsWith('['))
    refuse('a URL whose host is a DNS name or an IP address (letters, digits, hyphens and dots)');
  if (url.pathname !== '' && url.pathname !== '/') refuse(`${shape} with no path after the host`);
  if (url.hash !== '') refuse(`${shape} with no #fragment`);
  const port =
    url.port === '' ? (url.protocol === 'smtps:' ? SMTPS_DEFAULT_PORT : SMTP_DEFAULT_PORT) : Number(url.port);
  if (!(port >= 1 && port <= 65535)) refuse('a URL whose port is 1–65535');

  let security: SmtpSecurity = url.protocol === 'smtps:' ? 'tls' : 'starttls';
  for (const [key, value] of url.searchParams) {
    if (key !== 'starttls') refuse(`a URL whose only query option is ?starttls=required (not "${key}")`);
    if (url.protocol === 'smtps:') refuse('smtps:// without ?starttls (smtps:// is TLS from the start)');
    if (value !== 'required') refuse('?starttls=required, or no ?starttls (STARTTLS when the server offers it)');
    security = 'starttls-required';
  }

  let user: string | undefined;
  let password: string | undefined;
  if (url.username !== '' || url.password !== '') {
    try {
      user = decodeURIComponent(url.username);
      password = decodeURIComponent(url.password);
    } catch {
      refuse('a URL whose user and password are percent-encoded correctly (% followed by two hex digits)');
    }
    if (user === '' || password === '')
      refuse('a URL with both a user and a password (smtp://user:password@host), or neither');
    if (/\p{Cc}/u.test(`${user}${password}`)) refuse('a URL whose user and password hold no control characters');
    if (security === 'starttls' && !isLoopback(host)) security = 'starttls-required';
  }

  const from = input.from.trim();
  if (!isEmailAddress(from))
    throw new UserError(
      'GEX_SETTING_INVALID',
      `${names.from} must be an e-mail address to send from, such as gex@example.com, got "${printable(from)}"`,
    );
  return new SmtpSettings(host, port, security, from, user, password);
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * A relay URL as an error may quote it: whatever stands between the user's `:` and the last `@`
 * (the password, however malformed the URL) is `***`, and so is every query value but starttls's (a
 * password put there by mistake); control characters are `?`; at most 200 characters.
 */
export function maskedSmtpUrl(text: string): string {
  let masked = text;
  const start = masked.indexOf('//');
  const at = masked.lastIndexOf('@');
  if (start >= 0 && at > start) {
    const colon = masked.indexOf(':', start + 2);
    if (colon >= 0 && colon < at) masked = `${masked.slice(0, colon + 1)}${HIDDEN}${masked.slice(at)}`;
  }
  const query = masked.indexOf('?');
  if (query >= 0)
    masked = `${masked.slice(0, query)}${masked
      .slice(query)
      .replace(/([?&][^=&#]*)=([^&#]*)/g, (pair: string, key: string) =>
        key.slice(1) === 'starttls' ? pair : `${key}=${HIDDEN}`,
      )}`;
  return printable(masked);
}

function printable(text: string): string {
  const clean = text.replace(/\p{Cc}/gu, '?');
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}
