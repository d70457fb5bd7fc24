import type { FastifyReply, FastifyRequest } from 'fastify';
import { sameSecret, type ConsoleSession } from './console-sessions.js';

/** The console's cookie: the session id only. */
export const SESSION_COOKIE = 'gex_console';
/** the CSRF token's form field, and its header for htmx's requests */
export const CSRF_FIELD = 'csrf';
export const CSRF_HEADER = 'x-csrf-token';

/**
 * What every console answer says to the browser: scripts and styles from gex only (no inline
 * script, no eval), no frames, forms only to gex, no referrer off gex, not cached. The referrer
 * policy is same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` with the
 * console's own form POSTs, which crossSite must refuse.
 */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

export function setConsoleHeaders(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(CONSOLE_HEADERS)) reply.header(name, value);
}

/** Whether the request came over HTTPS (directly, or as a proxy in front says): the cookie is Secure then. */
export function overHttps(request: FastifyRequest): boolean {
  if (request.protocol === 'https') return true;
  const forwarded = request.headers['x-forwarded-proto'];
  return (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim() === 'https';
}

/** A request another site made the browser send (the browser says so, or its Origin is not this host). */
export function crossSite(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') return true;
  const origin = request.headers.origin;
  if (origin === undefined || origin === 'null') return origin === 'null';
  try {
    return new URL(origin).host !== request.headers.host;
  } catch {
    return true;
  }
}

/** Whether a state-changing request carries the session's CSRF token (form field or header) and is not cross-site. */
export function csrfHolds(request: FastifyRequest, session: ConsoleSession, field: string | undefined): boolean {
  if (crossSite(request)) return false;
  const header = request.headers[CSRF_HEADER];
  const given = field ?? (Array.isArray(header) ? header[0] : header);
  return sameSecret(given, session.csrf);
}
