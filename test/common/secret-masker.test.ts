import assert from 'node:assert/strict';
import { SecretMasker } from '../../src/common/secret-masker.js';
import { buildHttpRequest } from '../../src/extractor/http/request-builder.js';
import { bodySnippet } from '../../src/extractor/response/decode-response.js';
import { fromPlain, type JsonObject } from '../../src/json/index.js';
import {
  guzzleQueryBuild,
  phpHttpBuildQuery,
  phpJsonEncode,
  phpRawUrlencode,
  phpStringFromBytes,
  phpUrlencode,
  resolveGuzzleUrl,
} from '../../src/php/index.js';
import type { ApiSettings } from '../../src/extractor/config/api-settings.js';
import { assertNoSecret, secretForms } from '../support/secret-forms.js';

const SECRET = `Zq7Kx9Wm! *'()~/"é😀+ sp\\ace Yt5Pq2Lr`;
const MARKERS = ['Zq7Kx9Wm', 'Yt5Pq2Lr'];

function masker(...secrets: string[]): SecretMasker {
  const m = new SecretMasker();
  for (const s of secrets) m.add(s);
  return m;
}

/** `form` inside some text comes out as `[hidden]`, the text around it unchanged. */
function assertHidden(m: SecretMasker, form: string): void {
  assert.equal(m.mask(`before ${form} after`), 'before [hidden] after', `form ${JSON.stringify(form)}`);
}

const api = (): ApiSettings =>
  ({
    baseUrl: 'https://api.test/v1/',
    defaultParams: new Map(),
    defaultHeaders: new Map(),
    clientHeaders: new Map(),
  }) as unknown as ApiSettings;

describe('secret masker: one test per encoding', () => {
  it('a header secret echoed by an API that reads its UTF-8 bytes as Latin-1', () => {
    assertHidden(masker(SECRET), Buffer.from(SECRET, 'utf8').toString('latin1'));
  });

  it('a secret holding raw digest bytes: registered without failing, hidden raw, URL-encoded and in base64', () => {
    const raw = phpStringFromBytes(Buffer.from('900150983cd24fb0d6963f7d28e17f72', 'hex'));
    const m = masker(raw);
    assertHidden(m, raw);
    assertHidden(m, phpUrlencode(raw));
    assertHidden(m, Buffer.from('900150983cd24fb0d6963f7d28e17f72', 'hex').toString('base64'));
  });

  const m = masker(SECRET);
  const one = new Map([['k', SECRET]]);

  it('raw', () => assertHidden(m, SECRET));
  it("PHP urlencode (! * ' ( ) ~ encoded, space as +)", () => {
    assert.match(phpUrlencode(SECRET), /%21\+%2A%27%28%29%7E/);
    assertHidden(m, phpUrlencode(SECRET));
  });
  it('PHP rawurlencode (~ kept, space as %20)', () => {
    assert.match(phpRawUrlencode(SECRET), /~%2F/);
    assertHidden(m, phpRawUrlencode(SECRET));
  });
  it('http_build_query (GET query, form body)', () => assertHidden(m, phpHttpBuildQuery(one).slice(2)));
  it('Guzzle Query::build RFC 3986 (auth query parameters)', () => assertHidden(m, guzzleQueryBuild(one).slice(2)));
  it('Guzzle Query::build RFC 1738', () => assertHidden(m, guzzleQueryBuild(one, 'RFC1738').slice(2)));
  it('Guzzle URI normalisation of a raw value in a URL, and the WHATWG parser after it', () => {
    const url = resolveGuzzleUrl('https://h/', `x?k=${SECRET}`);
    assertHidden(m, url.slice('https://h/x?k='.length));
    assertHidden(m, new URL(url).search.slice(3));
  });
  it('encodeURIComponent, with + for space, and URLSearchParams', () => {
    assertHidden(m, encodeURIComponent(SECRET));
    assertHidden(m, encodeURIComponent(SECRET).replace(/%20/g, '+'));
    assertHidden(m, new URLSearchParams([['k', SECRET]]).toString().slice(2));
  });
  it('lower-case hex in percent-encodings and \\u escapes', () => {
    assertHidden(
      m,
      phpRawUrlencode(SECRET)
        .toLowerCase()
        .replace(/zq7kx9wm/, 'Zq7Kx9Wm')
        .replace(/yt5pq2lr/, 'Yt5Pq2Lr')
        .replace(/sp%5cace/, 'sp%5cace'),
    );
    assertHidden(
      m,
      phpJsonEncode(SECRET)
        .slice(1, -1)
        .replace(/\\u[0-9a-f]{4}/g, (e) => e.toUpperCase().replace('\\U', '\\u')),
    );
  });
  it('base64 of the secret alone', () => assertHidden(m, Buffer.from(SECRET).toString('base64')));
  it('base64 of a composite holding the secret (Basic user:password), at every byte alignment', () => {
    for (const user of ['u', 'us', 'usr', 'user']) {
      const header = `Authorization: Basic ${Buffer.from(`${user}:${SECRET}`).toString('base64')}`;
      assertNoSecret(m.mask(header), SECRET, MARKERS, `Basic header of ${user}`);
      const trailing = Buffer.from(`${user}:${SECRET}:more`).toString('base64');
      assertNoSecret(m.mask(trailing), SECRET, MARKERS, `base64 of ${user}:secret:more`);
    }
  });
  it('a registered composite is hidden whole', () => {
    const basic = masker('user:pa55word');
    assert.equal(basic.mask(`Basic ${Buffer.from('user:pa55word').toString('base64')}`), 'Basic [hidden]');
  });
  it('PHP json_encode (\\/ and \\uXXXX, surrogate pairs)', () => {
    assert.match(phpJsonEncode(SECRET), /\\\/.*\\u00e9\\ud83d\\ude00/);
    assertHidden(m, phpJsonEncode(SECRET).slice(1, -1));
  });
  it('JSON.stringify', () => assertHidden(m, JSON.stringify(SECRET).slice(1, -1)));
  it('nested JSON escapes: a PHP JSON body echoed in JSON, quoted in a JSON log line', () => {
    const body = phpJsonEncode(fromPlain({ q: SECRET }));
    const echoed = JSON.stringify({ error: 'bad', body });
    const line = JSON.stringify({ msg: `The API request failed: ${echoed}` });
    assertNoSecret(m.mask(line), SECRET, MARKERS, 'log line');
  });
  it('whitespace collapsed (response snippets in error messages)', () => {
    const spaced = masker('tab\tand  two');
    assert.equal(spaced.mask('x tab and two y'), 'x [hidden] y');
  });
  it('every form of the test helper', () => {
    for (const [name, form] of secretForms(SECRET)) assert.equal(m.mask(`<${form}>`), '<[hidden]>', name);
  });

  it('requests gex builds: GET query, JSON body, form body, headers', () => {
    const params = fromPlain({ q: SECRET, n: 1 }) as JsonObject;
    for (const method of ['GET', 'POST', 'FORM'] as const) {
      const request = buildHttpRequest(
        { endpoint: 'items', params, method },
        fromPlain({ 'X-Key': SECRET }) as JsonObject,
        api(),
      );
      assertNoSecret(m.mask(JSON.stringify(request)), SECRET, MARKERS, `${method} request`);
    }
  });
});

describe('secret masker: behaviour', () => {
  it('hides a secret containing another one as a whole', () => {
    assert.equal(masker('abcd', 'xxabcdyy').mask('1 xxabcdyy 2 abcd'), '1 [hidden] 2 [hidden]');
  });

  it('keeps # values of a state (the store encrypts them) and hides secrets in other values and keys', () => {
    const m = masker('t0k3n-value');
    const state = fromPlain({
      '#token': 't0k3n-value',
      response: 'echo t0k3n-value',
      ['t0k3n-value']: 1,
      list: ['t0k3n-value'],
    });
    assert.deepEqual(Object.fromEntries(m.maskValues(state) as JsonObject), {
      '#token': 't0k3n-value',
      response: 'echo [hidden]',
      '[hidden]': 1,
      list: ['[hidden]'],
    });
  });

  it('remembers per-request values (signatures) only while they are recent', () => {
    const m = new SecretMasker();
    for (let i = 0; i < 40; i++) m.addRecent(`signature-${String(i).padStart(4, '0')}`);
    assert.equal(m.mask('signature-0039'), '[hidden]');
    assert.equal(m.mask('signature-0000'), 'signature-0000', 'old signatures are forgotten');
    assert.equal(m.size, 0, 'recent values do not grow the permanent pattern');
  });

  it('does not rebuild its pattern when a recent value comes again (a value computed the same for every request)', () => {
    const m = new SecretMasker();
    m.addRecent('computed-value-A');
    m.addRecent('computed-value-B');
    m.mask('x');
    const compiled = (m as unknown as { recentPattern: RegExp | null }).recentPattern;
    m.addRecent('computed-value-A');
    m.addRecent('computed-value-B');
    assert.equal(m.mask('computed-value-A computed-value-B'), '[hidden] [hidden]');
    assert.equal((m as unknown as { recentPattern: RegExp | null }).recentPattern, compiled, 'the same pattern object');
  });

  it('cuts response snippets after hiding secrets, so a secret across the cut shows no part', () => {
    const m = masker(SECRET);
    const body = Buffer.from(`${'x'.repeat(290)}${SECRET}${'y'.repeat(500)}`);
    const snippet = bodySnippet(body, (t) => m.mask(t));
    assert.ok(snippet.includes('[hidden]'), snippet);
    assertNoSecret(snippet, SECRET, MARKERS.concat(['Zq7K']), 'snippet');
  });

  it('masks a log line with ten secrets of many forms, leaving a line without them as it is', () => {
    // no microsecond bound: on a loaded machine a timed unit test measures the machine, not gex
    const m = new SecretMasker();
    for (let i = 0; i < 10; i++) m.add(`${SECRET}${i}-token-${i * 7919}`);
    const line = `${JSON.stringify({ level: 'info', time: '2026-01-01T00:00:00.000Z', msg: "Job 'users' page 12: GET https://api.example.com/v1/users?page=12&limit=100&filter=active -> 200, 100 records, 51234 bytes, 35 ms" })}\n`;
    assert.ok(m.size > 300, `${m.size} forms`);
    assert.equal(m.mask(line), line);
    const withSecrets = `${line.slice(0, -1)} ${SECRET}3-token-${3 * 7919} ${encodeURIComponent(`${SECRET}9-token-${9 * 7919}`)}\n`;
    const masked = m.mask(withSecrets);
    assert.ok(!masked.includes(SECRET) && !masked.includes(encodeURIComponent(SECRET)), masked);
    assert.equal(masked.split('[hidden]').length, 3, masked);
  });
});
