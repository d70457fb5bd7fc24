import type { FastifyReply, FastifyRequest } from 'fastify';
import { displayText } from '../../common/log-text.js';
import { holdsUrlSignature } from '../../common/url-signature.js';
import type { Logger } from '../../common/logger.js';
import { tokenIdOf, tokenOf } from '../auth.js';
import type { ResponseObserver } from './response-observers.js';

/**
 * One log line per request, written once the answer is sent (fastify's own request logging writes
 * two lines per request and serialises headers): method, route pattern, the URL as safe to log,
 * status, duration and the id of the request's token. Never the token, never a header.
 */

const HIDDEN = '[hidden]';
/** longest URL a line shows (a request line may be 16 KiB): the route pattern says the rest */
const MAX_LOGGED_URL = 300;
/** query parameters of the Storage API whose short plain values are shown as they are */
const SHOWN_PARAMETERS = new Set(['include', 'isDeleted', 'componentType', 'limit', 'offset', 'exclude']);
const PLAIN_VALUE = /^[\w,.-]{0,64}$/;
/** the shape of a token `gex tokens create` makes: `<project>-<id>-<40 base64url characters>` */
const TOKEN_SHAPE = /\d+-\d+-[\w-]{40}/;
/** probes and scrapes repeat every few seconds: logged at debug, not info */
const QUIET_ROUTES = new Set(['/health', '/metrics']);

function decoded(text: string): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Does `text` (raw or percent-decoded) hold a token: the request's own or anything shaped like one? */
function holdsToken(text: string, token: string | undefined): boolean {
  const plain = decoded(text);
  for (const form of plain === text ? [text] : [text, plain]) {
    if (TOKEN_SHAPE.test(form) || (token !== undefined && token.length >= 8 && form.includes(token))) return true;
  }
  return false;
}

/** Does `text` (raw or percent-decoded) name a pre-signed address's signing parameter with a value? */
function holdsSignature(text: string): boolean {
  return holdsUrlSignature(text) || holdsUrlSignature(decoded(text));
}

function loggableQuery(query: string, token: string | undefined): string {
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      const shownName = holdsToken(name, token) || holdsSignature(name) ? HIDDEN : name;
      if (eq < 0) return shownName;
      const value = pair.slice(eq + 1);
      const shown = SHOWN_PARAMETERS.has(decoded(name)) && PLAIN_VALUE.test(value) && !holdsToken(value, token);
      return `${shownName}=${shown ? value : HIDDEN}`;
    })
    .join('&');
}

/**
 * The URL for a log line. Query values are hidden unless their parameter is a known list option
 * with a short plain value (a client may put a token or a secret in any other, such as a pre-signed
 * address's X-Amz-Signature); a path or a parameter's name that holds a token or a pre-signed
 * address's signing parameter (raw or percent-encoded) is replaced by `[hidden]`. Control characters are escaped (see displayText), so a URL
 * cannot forge a line; long URLs are cut.
 */
export function loggableUrl(url: string, token?: string): string {
  const at = url.indexOf('?');
  const path = at < 0 ? url : url.slice(0, at);
  let shown = holdsToken(path, token) || holdsSignature(path) ? HIDDEN : path;
  if (at >= 0) shown += `?${loggableQuery(url.slice(at + 1), token)}`;
  if (shown.length > MAX_LOGGED_URL) shown = `${shown.slice(0, MAX_LOGGED_URL)}…`;
  return displayText(shown);
}

/**
 * The request log for `logger` (info; probes at debug), or undefined when it logs neither. Its
 * lines have no sentence besides their fields: the text format shows them all.
 */
export function requestLog(logger: Logger): ResponseObserver | undefined {
  const debug = logger.isLevelEnabled('debug');
  if (!debug && !logger.isLevelEnabled('info')) return undefined;
  const lines = logger.child({}, { showFields: true });
  return (request: FastifyRequest, reply: FastifyReply, route: string) => {
    const quiet = QUIET_ROUTES.has(route);
    if (quiet && !debug) return;
    const fields: Record<string, string | number> = {
      reqId: request.id,
      method: request.method,
      route,
      url: loggableUrl(request.url, tokenOf(request)),
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 10) / 10,
    };
    const tokenId = tokenIdOf(request);
    if (tokenId !== undefined) fields.tokenId = tokenId;
    if (quiet) lines.debug(fields, 'request');
    else lines.info(fields, 'request');
  };
}
