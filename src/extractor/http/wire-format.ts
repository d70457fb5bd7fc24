/** What goes on the wire exactly as GE sends it: the request target and header bytes. */
import http from 'node:http';
import https from 'node:https';
import type { RequestFunction } from 'got';
import { phpStringBytes } from '../../php/index.js';

/**
 * The path and query of a URL exactly as written (without the fragment). gex builds URLs as
 * Guzzle does; parsing one as a WHATWG URL re-encodes some of it (a `'` in the query becomes
 * `%27`), so the target sent on the wire would differ from GE's.
 */
export function rawRequestTarget(url: string): string | undefined {
  const match = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*([^#]*)/i.exec(url);
  if (!match) return undefined;
  const target = match[1] === '' ? '/' : match[1].startsWith('?') ? `/${match[1]}` : match[1];
  // only visible ASCII goes on the request line as is; anything else is left to the URL parser
  return /^[\x21-\x7e]+$/.test(target) ? target : undefined;
}

/**
 * A request function for got that sends `url`'s own path and query bytes. It applies only to the
 * URL it was made for: a redirect target is sent as got parsed it.
 */
export function exactTargetRequest(url: string): RequestFunction | undefined {
  const target = rawRequestTarget(url);
  if (target === undefined) return undefined;
  // got parses the URL before calling this; most URLs are already in its form, so parsing again
  // (to tell the URL from a redirect target) is needed only when they differ
  let href: string | null | undefined;
  const isTheUrl = (parsedHref: string): boolean => {
    if (parsedHref === url) return true;
    if (href === undefined) {
      try {
        href = new URL(url).href;
      } catch {
        href = null;
      }
    }
    return parsedHref === href;
  };
  return (parsed, options, callback) => {
    const transport = parsed.protocol === 'https:' ? https : http;
    const exact = isTheUrl(parsed.href) ? { ...options, path: target } : options;
    return transport.request(parsed, exact as http.RequestOptions, callback);
  };
}

/**
 * Header values as the bytes GE sends: the value's UTF-8 bytes (raw bytes of a digest as they
 * are). Node writes a header string one byte per character, so each byte becomes one character;
 * otherwise `é` would go out as one Latin-1 byte and an emoji would be refused.
 */
export function wireHeaders(headers: Array<[string, string]>): Record<string, string | string[]> {
  // got keeps one entry per name whatever its case: names differing in case only become one
  // header with several values, each sent on its own line as Guzzle sends them
  const byName = new Map<string, [string, string[]]>();
  for (const [name, value] of headers) {
    const bytes = phpStringBytes(value).toString('latin1');
    const entry = byName.get(name.toLowerCase());
    if (entry) entry[1].push(bytes);
    else byName.set(name.toLowerCase(), [name, [bytes]]);
  }
  const entries = [...byName.values()].map(([name, values]) => [name, values.length === 1 ? values[0] : values]);
  return Object.fromEntries(entries);
}

/**
 * A body as bytes. Node sends the head and a *string* first chunk in one write encoded as the
 * chunk is (UTF-8), which would encode the header bytes above a second time; a Buffer body keeps
 * the head Latin-1, byte for byte.
 */
export function wireBody(body: string | undefined): Buffer | undefined {
  return body === undefined ? undefined : phpStringBytes(body);
}
