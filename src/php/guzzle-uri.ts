import { phpStringBytes } from './byte-string.js';
import { phpParseUrl } from './parse-url.js';
import { phpUrldecode, phpUrlencode } from './query-string.js';

/**
 * How Guzzle (GE's HTTP client) turns `base_uri` + a request target into the URL it sends:
 * RFC 3986 section 5.2 reference resolution (so a base without a trailing slash loses its last segment)
 * followed by psr7 `Uri` normalisation (lower-case scheme and host, default port dropped,
 * characters outside the allowed set percent-encoded, valid `%XX` kept, a stray `%` escaped).
 */

interface UriParts {
  scheme: string;
  authority: string | null;
  path: string;
  query: string | null;
  fragment: string | null;
}

const URI_PATTERN = /^(?:([A-Za-z][A-Za-z0-9+.-]*):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/s;

function parse(uri: string): UriParts {
  const m = URI_PATTERN.exec(uri)!;
  return { scheme: m[1] ?? '', authority: m[2] ?? null, path: m[3], query: m[4] ?? null, fragment: m[5] ?? null };
}

/** RFC 3986 section 5.2.4 as psr7 `UriResolver::removeDotSegments` implements it. */
function removeDotSegments(path: string): string {
  if (path === '' || path === '/') return path;
  const segments = path.split('/');
  const out: string[] = [];
  for (const segment of segments) {
    if (segment === '..') out.pop();
    else if (segment !== '.') out.push(segment);
  }
  let result = out.join('/');
  const last = segments[segments.length - 1];
  if (path.startsWith('/') && !result.startsWith('/')) result = `/${result}`;
  else if (result !== '' && (last === '.' || last === '..')) result += '/';
  return result;
}

/** Guzzle `UriResolver::resolve(base, reference)`. */
function resolve(base: UriParts, ref: UriParts): UriParts {
  if (ref.scheme !== '') return { ...ref, path: removeDotSegments(ref.path) };
  if (ref.authority !== null && ref.authority !== '') {
    return {
      scheme: base.scheme,
      authority: ref.authority,
      path: removeDotSegments(ref.path),
      query: ref.query,
      fragment: ref.fragment,
    };
  }
  let path: string;
  let query: string | null;
  if (ref.path === '') {
    path = base.path;
    query = ref.query !== null && ref.query !== '' ? ref.query : base.query;
  } else {
    if (ref.path.startsWith('/')) path = ref.path;
    else if (base.authority && base.path === '') path = `/${ref.path}`;
    else {
      const slash = base.path.lastIndexOf('/');
      path = slash < 0 ? ref.path : base.path.slice(0, slash + 1) + ref.path;
    }
    path = removeDotSegments(path);
    query = ref.query;
  }
  return { scheme: base.scheme, authority: base.authority, path, query, fragment: ref.fragment };
}

// `u`: a character outside the BMP (an emoji) is one match, encoded as its four UTF-8 bytes
const PATH_UNSAFE = /[^A-Za-z0-9_\-.~!$&'()*+,;=:@/%]|%(?![A-Fa-f0-9]{2})/gu;
const QUERY_UNSAFE = /[^A-Za-z0-9_\-.~!$&'()*+,;=:@/?%]|%(?![A-Fa-f0-9]{2})/gu;

function encodeUnsafe(s: string, pattern: RegExp): string {
  // byte by byte: a raw byte (or any lone surrogate) is encoded instead of failing like encodeURIComponent
  return s.replace(pattern, (ch) =>
    [...phpStringBytes(ch)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
}

/** psr7 `Uri` query normalisation: characters outside the allowed set are percent-encoded (bytes). */
export function guzzleQueryEncode(query: string): string {
  return encodeUnsafe(query, QUERY_UNSAFE);
}

const DEFAULT_PORTS: Record<string, string> = { http: '80', https: '443' };

function normaliseAuthority(scheme: string, authority: string): string {
  const at = authority.lastIndexOf('@');
  const userInfo = at >= 0 ? authority.slice(0, at + 1) : '';
  let hostPort = authority.slice(at + 1).toLowerCase();
  const portMatch = /:(\d*)$/.exec(hostPort);
  if (portMatch && !hostPort.endsWith(']') && (portMatch[1] === '' || portMatch[1] === DEFAULT_PORTS[scheme])) {
    hostPort = hostPort.slice(0, portMatch.index);
  }
  return userInfo + hostPort;
}

function compose(parts: UriParts): string {
  const scheme = parts.scheme.toLowerCase();
  let out = scheme ? `${scheme}:` : '';
  if (parts.authority !== null) out += `//${normaliseAuthority(scheme, parts.authority)}`;
  let path = encodeUnsafe(parts.path, PATH_UNSAFE);
  if (parts.authority !== null && path !== '' && !path.startsWith('/')) path = `/${path}`;
  out += path;
  if (parts.query !== null && parts.query !== '') out += `?${guzzleQueryEncode(parts.query)}`;
  return out;
}

/**
 * psr7 `Uri::parse`, which reads a request target: every run of characters other than
 * `: / @ ? & = #` urlencoded, PHP's parse_url, each part urldecoded. So `c1/1:80` is host `c1`,
 * port 80 (parse_url's reading), not a path; false where parse_url fails (`c1/x:99999`).
 */
function parseLikePsr7(uri: string): UriParts | false {
  const url = phpParseUrl(uri.replace(/[^:/@?&=#]+/gu, (run) => phpUrlencode(run)));
  if (url === false) return false;
  const decoded = (part: string | undefined) => (part === undefined ? undefined : phpUrldecode(part));
  let authority: string | null = null;
  if (url.host !== undefined) {
    const user = decoded(url.user);
    const userInfo = user === undefined ? '' : `${user}${url.pass !== undefined ? `:${decoded(url.pass)}` : ''}@`;
    authority = `${userInfo}${decoded(url.host)}${url.port !== undefined ? `:${url.port}` : ''}`;
  }
  return {
    scheme: decoded(url.scheme) ?? '',
    authority,
    path: decoded(url.path) ?? '',
    query: decoded(url.query) ?? null,
    fragment: decoded(url.fragment) ?? null,
  };
}

/** A request target Guzzle cannot read (psr7: "Unable to parse URI"). */
export class UnparsableUriError extends Error {}

/**
 * The absolute URL Guzzle sends for `target` with client option `base_uri: baseUrl` (fragment
 * dropped). Throws UnparsableUriError where Guzzle cannot read the target.
 */
export function resolveGuzzleUrl(baseUrl: string, target: string): string {
  const ref = parseLikePsr7(target);
  if (ref === false) throw new UnparsableUriError(`Unable to parse URI: ${target}`);
  const resolved = target === '' ? parse(baseUrl) : resolve(parse(baseUrl), ref);
  return compose({ ...resolved, fragment: null });
}
