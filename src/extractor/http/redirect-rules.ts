import type { BeforeRedirectHook } from 'got';
import { UserError } from '../../common/errors.js';
import type { AllowedUrlRule } from '../config/allowed-hosts.js';
import { rawRequestTarget } from './wire-format.js';

/** A redirect the extractor refuses to follow. */
export class RedirectRefused extends UserError {
  constructor(message: string) {
    super('GEX_API_REDIRECT_REFUSED', message);
    this.name = 'RedirectRefused';
  }
}

/**
 * Headers still sent after a redirect to another origin. Everything else is dropped: credentials
 * (Authorization, Cookie, Proxy-Authorization), what the auth method added, and every configured
 * header — a plain `X-Api-Key` in `api.http.headers` is as much a credential as a `#` value, and
 * gex cannot tell which configured headers are secrets.
 */
const FORWARDED_ACROSS_ORIGINS = new Set([
  'user-agent',
  'accept',
  'accept-encoding',
  'accept-language',
  'content-type',
  'content-length',
]);

export interface RedirectRulesOptions {
  /** `image_parameters.allowed_hosts` as a test; absent = any host */
  allowed?: AllowedUrlRule | null;
  /** told which header names were not forwarded to another origin */
  onHeadersDropped?: (from: string, to: string, names: string[]) => void;
}

/**
 * The whitelist applied to a request gex is about to send. GE checks only the top-level job URLs;
 * next-page and child URLs come from the API's own responses, so a whitelisted API could otherwise
 * steer the extractor, and the credentials it carries, to any host.
 */
export function checkAllowedTarget(allowed: AllowedUrlRule | null | undefined, method: string, target: string): void {
  if (!allowed) return;
  const verdict = allowed(target);
  if (verdict.allowed) return;
  let shown: string;
  try {
    const url = new URL(target);
    // the path as sent (a parser would hide its dot segments), never the query (credentials)
    shown = `${url.origin}${rawRequestTarget(target)?.replace(/\?.*$/s, '') ?? url.pathname}`;
  } catch {
    shown = 'an unparsable URL';
  }
  throw new RedirectRefused(
    `Refusing ${method} ${shown}: ${verdict.reason}. ` +
      'Next-page and child URLs taken from responses must stay within it too; add the host if the API is meant to send you there.',
  );
}

/**
 * got's `beforeRedirect` hook applying gex's redirect rules to every hop: the target must pass the
 * allowed hosts whitelist, and a hop to another origin (scheme, host and port; an https → http
 * downgrade counts) sends no credential. A 307/308 to another origin would resend the request body
 * (which may carry secrets, e.g. a login's password) and is refused. got itself already drops
 * Authorization and Cookie when the host or port changes; this also covers the scheme and every
 * other header.
 */
export function redirectRules(options: RedirectRulesOptions): BeforeRedirectHook {
  return (next, response) => {
    const from = new URL(response.url);
    const to = next.url instanceof URL ? next.url : new URL(String(next.url));
    // a hop is sent as the client parsed it (its href): that is what is checked
    const verdict = options.allowed?.(to.href);
    if (verdict && !verdict.allowed) {
      throw new RedirectRefused(
        `${withoutQuery(from)} redirected to ${withoutQuery(to)}: ${verdict.reason}. Add it to the whitelist if the API is meant to send you there.`,
      );
    }
    if (from.origin === to.origin) return;
    if (next.body !== undefined || next.json !== undefined || next.form !== undefined) {
      throw new RedirectRefused(
        `${withoutQuery(from)} answered ${response.statusCode}, which would resend the request body to another origin (${to.origin}); gex does not follow it. ` +
          'Use the final address in the configuration.',
      );
    }
    const dropped = Object.keys(next.headers).filter((name) => !FORWARDED_ACROSS_ORIGINS.has(name.toLowerCase()));
    for (const name of dropped) delete next.headers[name];
    next.username = '';
    next.password = '';
    if (dropped.length > 0) options.onHeadersDropped?.(from.origin, to.origin, dropped);
  };
}

/** A URL for messages: queries may carry credentials (query authentication). */
export function withoutQuery(url: URL): string {
  return `${url.origin}${url.pathname}`;
}
