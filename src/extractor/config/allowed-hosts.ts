import { UserError } from '../../common/errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../json/index.js';
import { buildUrl, phpEmpty, phpToString } from '../../php/index.js';
import { rawRequestTarget } from '../http/wire-format.js';
import type { JobConfig } from './job-config.js';

interface AllowedHost {
  /** as configured */
  host: string;
  /** as a URL parser writes it (lower case, punycode, IPv6 in brackets): what it is compared with */
  hostname: string;
  scheme?: string;
  port?: string;
  /** the path prefix's segments (`api/v1` → ["api", "v1"]) */
  endpoint?: string[];
}

/** Whether a URL may be sent, and if not, why (for the error). */
export type AllowedVerdict = { allowed: true } | { allowed: false; reason: string };

/** `image_parameters.allowed_hosts` as a test of a URL exactly as the HTTP client sends it. */
export type AllowedUrlRule = (target: string) => AllowedVerdict;

const DEFAULT_PORT: Record<string, string> = { 'http:': '80', 'https:': '443' };
const WHITELIST = 'the allowed hosts whitelist (image_parameters.allowed_hosts)';

function parseEntries(value: JsonValue | undefined): AllowedHost[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isJsonObject).map((entry: JsonObject) => {
    const get = (k: string) => (phpEmpty(entry.get(k)) ? undefined : phpToString(entry.get(k)));
    const host = get('host') ?? '';
    const endpoint = get('endpoint')?.replace(/^\/+|\/+$/g, '');
    return {
      host,
      hostname: normalHostname(host),
      scheme: get('scheme'),
      port: get('port'),
      endpoint: endpoint ? endpoint.split('/') : undefined,
    };
  });
}

/**
 * An entry's host as the URL parser writes the host of a URL (`API.Example.com` → `api.example.com`,
 * `bücher.de` → punycode, `::1` → `[::1]`), so both sides are compared in one form. Anything that
 * is not a bare host name or address (a port, a path, userinfo) is kept as written and so matches
 * no URL.
 */
function normalHostname(host: string): string {
  const ipv6 = /^\[?([0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)\]?$/.exec(host);
  const text = ipv6 ? `[${ipv6[1]}]` : host;
  if (!ipv6 && !/^[^/?#@\\\s:[\]%]+$/u.test(host)) return host;
  try {
    return new URL(`http://${text}/`).hostname;
  } catch {
    return host;
  }
}

/**
 * What the HTTP client sends for `target`: the host, port and scheme as it parses them (the
 * connection and the Host header), and the path exactly as written — gex sends the request target
 * as built (see rawRequestTarget), not as a URL parser would normalise it (`/a/%2e%2e/b` is sent
 * as it is; a parser reads `/b`).
 */
function sentTarget(target: string): { url: URL; path: string } | null {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return null;
  }
  const raw = rawRequestTarget(target);
  return { url, path: raw === undefined ? url.pathname : raw.replace(/\?.*$/s, '') };
}

/** Percent escapes decoded (as bytes, UTF-8 read leniently); the path is ASCII, as it is sent. */
function percentDecoded(text: string): string {
  if (!text.includes('%')) return text;
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const escape = /^%[0-9A-Fa-f]{2}/.exec(text.slice(i, i + 3));
    if (escape) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(text.charCodeAt(i) & 0xff);
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * The first segment of `path` (as written) that some server could read as `.` or `..` — and so resolve to
 * another path than the one checked: literal or percent-encoded dots (`%2e`, `.%2E`, also encoded
 * twice), segments split by `/`, `\` or their encodings, a `;parameter` after the dots (`..;`), and
 * dots of other scripts that Unicode folds to `.` (`．`). Null when there is none.
 */
export function dotSegmentOf(path: string): string | null {
  for (const segment of path.split(/[/\\]/)) {
    let decoded = segment;
    // decoded until nothing changes (bounded): `%252e` is `%2e` to a server that decodes twice
    for (let round = 0; round < 4; round++) {
      const next = percentDecoded(decoded);
      if (next === decoded) break;
      decoded = next;
    }
    // an encoded slash splits the segment for a server that decodes before it resolves
    for (const part of decoded.normalize('NFKC').split(/[/\\]/)) {
      const bare = part.split(';')[0];
      if (bare === '.' || bare === '..') return segment;
    }
  }
  return null;
}

/** Whether the sent path starts with the entry's segments, compared exactly as sent (like GE, on the raw path). */
function pathStartsWith(path: string, prefix: string[]): boolean {
  const segments = path.replace(/^\//, '').split('/');
  return prefix.every((segment, i) => segments[i] === segment);
}

function verdict(target: string, entries: AllowedHost[]): AllowedVerdict {
  const sent = sentTarget(target);
  if (!sent) return { allowed: false, reason: 'it is not a valid URL' };
  const { url, path } = sent;
  const forHost = entries.filter(
    (entry) =>
      entry.hostname === url.hostname &&
      (!entry.scheme || url.protocol === `${entry.scheme}:`) &&
      (!entry.port || (url.port || DEFAULT_PORT[url.protocol]) === entry.port),
  );
  if (forHost.length === 0) return { allowed: false, reason: `the host ${url.host} is not in ${WHITELIST}` };
  let dotSegment: string | null = null;
  for (const entry of forHost) {
    if (!entry.endpoint) return { allowed: true };
    // the path is checked as sent: a dot segment would let the server see another one
    dotSegment ??= dotSegmentOf(path);
    if (dotSegment !== null) continue;
    if (pathStartsWith(path, entry.endpoint)) return { allowed: true };
  }
  if (dotSegment !== null) {
    return {
      allowed: false,
      reason:
        `its path ${JSON.stringify(path)} has the dot segment ${JSON.stringify(dotSegment)}, which a server may resolve to a path outside the endpoint that ` +
        `${WHITELIST} allows; gex sends the path as written, so it refuses one it cannot check. Write the path without "." and ".." segments`,
    };
  }
  return {
    allowed: false,
    reason: `the path ${JSON.stringify(path)} is below no endpoint that ${WHITELIST} allows on ${url.protocol}//${url.host}`,
  };
}

/**
 * The `image_parameters.allowed_hosts` whitelist as a test of one URL, or null when none is set.
 * The HTTP client applies it to every request and every redirect hop: a whitelisted API must not be
 * able to send the extractor (and what it carries) to a host the whitelist does not name. What is
 * tested is what is sent: the host as the client connects to it, the path as written.
 */
export function allowedHostsRule(imageParameters: JsonObject): AllowedUrlRule | null {
  const entries = parseEntries(imageParameters.get('allowed_hosts'));
  if (entries.length === 0) return null;
  return (target) => verdict(target, entries);
}

/**
 * `image_parameters.allowed_hosts`: when set, every top-level job URL (base URL + endpoint, joined
 * naively as GE checks it) must match an entry `{host, scheme?, port?, endpoint?}` before any
 * request is sent, as GE checks it. GE stops there; gex also checks every request it sends, child
 * and next-page URLs and redirects included (see allowedHostsRule).
 */
export function checkAllowedHosts(imageParameters: JsonObject, baseUrl: string, jobs: JobConfig[]): void {
  const entries = parseEntries(imageParameters.get('allowed_hosts'));
  if (entries.length === 0) return;
  for (const job of jobs) {
    const target = /^[a-z][a-z0-9+.-]*:\/\//i.test(job.endpoint)
      ? job.endpoint
      : `${baseUrl.replace(/\/+$/, '')}/${job.endpoint.replace(/^\/+/, '')}`;
    const text = job.method === 'GET' ? buildUrl(target, job.params) : target;
    const result = verdict(text, entries);
    if (!result.allowed) {
      const why = result.reason.startsWith('its path') ? `: ${result.reason}` : '';
      throw new UserError(
        'GEX_API_HOST_NOT_ALLOWED',
        `URL "${text}" is not in the allowed hosts whitelist (image_parameters.allowed_hosts)${why}.`,
      );
    }
  }
}
