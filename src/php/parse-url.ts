/**
 * PHP 7.4 `parse_url`, which Generic Extractor's `buildUrl` applies to the endpoint of every GET
 * request that has query parameters. It is not an RFC 3986 parser, and what it does to odd text
 * decides the URL GE sends:
 * - every control character (0x00–0x1F, 0x7F) of every component becomes `_`, so a newline in a
 *   placeholder value is sent as `_`, not `%0A`;
 * - a relative endpoint can read as host and port (`c1/1:80` → host `c1`, port 80, path `/1:80`), or
 *   as a scheme (`a:b/c` → scheme `a`, path `b/c`), and `buildUrl` rebuilds it without them;
 * - a port above 65535, negative or longer than five characters makes the whole URL unreadable (false).
 * Indices below are UTF-16 code units; every delimiter PHP looks for is ASCII, so they match the
 * bytes PHP walks.
 */
export interface PhpUrl {
  scheme?: string;
  user?: string;
  pass?: string;
  host?: string;
  port?: number;
  path?: string;
  query?: string;
  fragment?: string;
}

const CONTROL_CHARACTERS = /[\x00-\x1f\x7f]/g;
const clean = (s: string) => s.replace(CONTROL_CHARACTERS, '_');
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isSchemeCharacter = (c: string) => /^[A-Za-z0-9+.-]$/.test(c);
const startsWithTwoSlashes = (str: string, at: number) => at + 1 < str.length && str[at] === '/' && str[at + 1] === '/';

/** The first of `chars` in str[from, to), or `to`. */
function firstOf(str: string, from: number, to: number, chars: string): number {
  for (let i = from; i < to; i++) if (chars.includes(str[i])) return i;
  return to;
}

/** C `strtol` base 10 of a short text (white space, a sign, digits up to any other character); null without digits. */
function strtol(text: string): number | null {
  const m = /^[ \t\n\v\f\r]*([+-]?)(\d+)/.exec(text);
  if (!m) return null;
  return m[1] === '-' ? -Number(m[2]) : Number(m[2]);
}

type Step = 'port' | 'host' | 'path';

/** PHP 7.4 `parse_url($url)` (all components): the components it finds, or false where PHP returns false. */
export function phpParseUrl(str: string): PhpUrl | false {
  const url: PhpUrl = {};
  const end = str.length;
  let s = 0;
  let e = str.indexOf(':');
  let step: Step;

  if (e > 0) {
    let schemeValid = true;
    for (let p = 0; p < e; p++) {
      if (!isSchemeCharacter(str[p])) {
        schemeValid = false;
        break;
      }
    }
    if (!schemeValid) {
      if (e + 1 < end && e < firstOf(str, s, end, '?#')) step = 'port';
      else if (startsWithTwoSlashes(str, s)) {
        s += 2;
        step = 'host';
      } else step = 'path';
    } else if (e + 1 === end) {
      url.scheme = clean(str.slice(s, e));
      return url;
    } else if (str[e + 1] !== '/') {
      // `host:80` reads as a port, `mailto:x` as a scheme
      let p = e + 1;
      while (p < end && isDigit(str[p])) p++;
      if ((p === end || str[p] === '/') && p - e < 7) step = 'port';
      else {
        url.scheme = clean(str.slice(s, e));
        s = e + 1;
        step = 'path';
      }
    } else {
      url.scheme = clean(str.slice(s, e));
      if (e + 2 < end && str[e + 2] === '/') {
        s = e + 3;
        step = 'host';
        if (url.scheme.toLowerCase() === 'file' && e + 3 < end && str[e + 3] === '/') {
          if (e + 5 < end && str[e + 5] === ':') s = e + 4;
          step = 'path';
        }
      } else {
        s = e + 1;
        step = 'path';
      }
    }
  } else if (e === 0) step = 'port';
  else if (startsWithTwoSlashes(str, s)) {
    s += 2;
    step = 'host';
  } else step = 'path';

  if (step === 'port') {
    const p = e + 1;
    let pp = p;
    while (pp < end && pp - p < 6 && isDigit(str[pp])) pp++;
    if (pp - p > 0 && pp - p < 6 && (pp === end || str[pp] === '/')) {
      const port = Number(str.slice(p, pp));
      if (port > 65535) return false;
      url.port = port;
      if (startsWithTwoSlashes(str, s)) s += 2;
      step = 'host';
    } else if (p === pp && pp === end) return false;
    else if (startsWithTwoSlashes(str, s)) {
      s += 2;
      step = 'host';
    } else step = 'path';
  }

  if (step === 'host') {
    e = firstOf(str, s, end, '/?#');
    const at = e > s ? str.lastIndexOf('@', e - 1) : -1;
    if (at >= s) {
      const colon = str.indexOf(':', s);
      if (colon >= 0 && colon < at) {
        url.user = clean(str.slice(s, colon));
        url.pass = clean(str.slice(colon + 1, at));
      } else url.user = clean(str.slice(s, at));
      s = at + 1;
    }
    // an IPv6 literal has no port to look for
    const bracketed = s < end && str[s] === '[' && str[e - 1] === ']';
    const colon = bracketed || e <= s ? -1 : str.lastIndexOf(':', e - 1);
    let hostEnd = e;
    if (colon >= s) {
      hostEnd = colon;
      if (url.port === undefined) {
        const digits = str.slice(colon + 1, e);
        if (digits.length > 5) return false;
        if (digits.length > 0) {
          const port = strtol(digits);
          if (port === null || port < 0 || port > 65535) return false;
          url.port = port;
        }
      }
    }
    if (hostEnd - s < 1) return false;
    url.host = clean(str.slice(s, hostEnd));
    if (e === end) return url;
    s = e;
  }

  e = end;
  const hash = str.indexOf('#', s);
  if (hash >= 0) {
    if (hash + 1 < e) url.fragment = clean(str.slice(hash + 1, e));
    e = hash;
  }
  const question = str.indexOf('?', s);
  if (question >= 0 && question < e) {
    if (question + 1 < e) url.query = clean(str.slice(question + 1, e));
    e = question;
  }
  if (s < e || s === end) url.path = clean(str.slice(s, e));
  return url;
}
