import {
  guzzleQueryEncode,
  legacySafeName,
  phpJsonString,
  phpRawUrlencode,
  phpStringBytes,
  phpUrlencode,
  safeName,
} from '../php/index.js';

/**
 * Every form a secret can take in what gex writes (requests it logs, error messages quoting an
 * API's answer, JSON log lines, summaries, state), so the masker can hide each of them.
 *
 * Base forms are the encodings gex (and Generic Extractor's Guzzle) apply to a value; each base
 * form may then sit inside up to three levels of JSON string escaping, with PHP's or JavaScript's
 * rules: e.g. a `json_encode`d request body (level 1) echoed by an API inside its JSON error
 * (level 2) quoted in a JSON log line (level 3).
 */
export function secretEncodings(secret: string): Set<string> {
  const forms = new Set<string>();
  let level = new Set(baseForms(secret));
  for (const form of level) forms.add(form);
  for (let depth = 0; depth < JSON_ESCAPE_LEVELS; depth++) {
    const next = new Set<string>();
    for (const form of level) {
      for (const escaped of [jsonEscape(form), phpJsonEscape(form)]) if (!forms.has(escaped)) next.add(escaped);
    }
    for (const form of next) forms.add(form);
    level = next;
  }
  forms.delete('');
  return forms;
}

const JSON_ESCAPE_LEVELS = 3;

/** Base64 fragments and column names shorter than this are not hidden: they would garble unrelated text. */
const MIN_BASE64_CORE = 8;

function baseForms(secret: string): string[] {
  const uri = uriComponentOfBytes(secret);
  const guzzleQuery = guzzleQueryEncode(secret);
  return [
    secret,
    // PHP urlencode: http_build_query (GET params, form bodies), Guzzle RFC 1738 queries
    phpUrlencode(secret),
    // PHP rawurlencode: Guzzle RFC 3986 queries (auth parameters), OAuth 1.0 headers
    phpRawUrlencode(secret),
    uri,
    uri.replace(/%20/g, '+'),
    // WHATWG form encoding (URLSearchParams)
    new URLSearchParams([['', secret]]).toString().slice(1),
    // a raw value in a URL (e.g. a baseUrl function): Guzzle's URI normalisation, then the
    // WHATWG URL parser of the HTTP client, which also escapes `'` in a query
    guzzleQuery,
    guzzleQuery.replace(/'/g, '%27'),
    // error messages quote response bodies with whitespace runs collapsed
    secret.replace(/\s+/g, ' '),
    // a header goes out as UTF-8 bytes; an API reading header bytes as Latin-1 echoes this
    phpStringBytes(secret).toString('latin1'),
    ...base64Forms(phpStringBytes(secret)),
    // a secret an API returns as a key becomes a column name in the parser's structure (state)
    ...[safeName(secret), legacySafeName(secret)].filter((name) => name.length >= MIN_BASE64_CORE),
  ];
}

/** encodeURIComponent on the secret's bytes: a raw byte (a binary digest) is encoded, not refused. */
function uriComponentOfBytes(s: string): string {
  return phpRawUrlencode(s)
    .replace(/%7E/g, '~')
    .replace(/%21|%27|%28|%29|%2A/g, (e) => String.fromCharCode(parseInt(e.slice(1), 16)));
}

/**
 * The base64 of the secret alone, and the characters that encode only the secret's bytes when it
 * is part of a longer base64-encoded text (a Basic auth `user:password`, a token inside a signed
 * document) at each of the three byte alignments.
 */
function base64Forms(bytes: Buffer): string[] {
  const forms = [bytes.toString('base64')];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const first = Math.ceil((offset * 8) / 6);
    const end = Math.floor(((offset + bytes.length) * 8) / 6);
    if (end - first >= MIN_BASE64_CORE) forms.push(encoded.slice(first, end));
  }
  return forms;
}

/** The inside of `JSON.stringify(s)`. */
function jsonEscape(s: string): string {
  return JSON.stringify(s).slice(1, -1);
}

/** The inside of PHP `json_encode($s)` (default flags: `\/`, `\uXXXX` for non-ASCII). */
function phpJsonEscape(s: string): string {
  return phpJsonString(s).slice(1, -1);
}
