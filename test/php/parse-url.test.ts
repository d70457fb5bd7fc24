import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { decodeJson, type JsonObject } from '../../src/json/index.js';
import { buildUrl, phpParseUrl } from '../../src/php/index.js';

const params = (json: string) => decodeJson(json) as JsonObject;

/** Expected values were taken from PHP 7.4 (the runtime of Generic Extractor). */
describe('php: parse_url', () => {
  const cases: Array<[string, ReturnType<typeof phpParseUrl>]> = [
    ['c1/a\x0bb?x=\x01#f\x02', { path: 'c1/a_b', query: 'x=_', fragment: 'f_' }],
    ['c1/1:80', { host: 'c1', port: 80, path: '/1:80' }],
    ['1:80/c1?y=1', { host: '1', port: 80, path: '/c1', query: 'y=1' }],
    ['x:99999/c1?y=1', false],
    ['c1/x:99999', false],
    ['a:b/c1?y=1', { scheme: 'a', path: 'b/c1', query: 'y=1' }],
    ['c1/a:b', { path: 'c1/a:b' }],
    ['//h/x', { host: 'h', path: '/x' }],
    ['c1?x=1:80', { path: 'c1', query: 'x=1:80' }],
    ['a\nb:1/c', { host: 'a_b', port: 1, path: '/c' }],
    [
      'https://u:p@Host:8080/a?b#c',
      { scheme: 'https', host: 'Host', port: 8080, user: 'u', pass: 'p', path: '/a', query: 'b', fragment: 'c' },
    ],
    ['users?', { path: 'users' }],
    ['h:0/x', { host: 'h', port: 0, path: '/x' }],
    ['//h:8a', { host: 'h', port: 8 }],
    ['', { path: '' }],
  ];
  for (const [url, expected] of cases) {
    it(`${JSON.stringify(url)} → ${JSON.stringify(expected)}`, () => assert.deepEqual(phpParseUrl(url), expected));
  }

  describe('against PHP 7.4 itself, on generated text', function () {
    this.timeout(60_000);
    const php = process.env.GE_REFERENCE ? path.join(process.env.GE_REFERENCE, 'php') : '';

    before(function () {
      if (!php || !existsSync(php)) {
        console.warn(
          '\n  !!! SKIPPED parse_url against PHP: GE_REFERENCE does not name the reference GE folder with its php binary\n',
        );
        this.skip();
      }
    });

    it("gives PHP's components (or false) for 3,000 strings of URL delimiters, digits, control and non-ASCII characters", () => {
      const piece = fc.constantFrom(
        ':',
        '/',
        '//',
        '?',
        '#',
        '@',
        '[',
        ']',
        'a',
        'B',
        '1',
        '80',
        '99999',
        '0',
        'http',
        'file',
        '+',
        '.',
        '-',
        ' ',
        '\n',
        '\x00',
        '\x7f',
        '\x1f',
        'ü',
        '€',
        '%',
        '\t',
      );
      const urls = fc.sample(
        fc.array(piece, { maxLength: 9 }).map((parts) => parts.join('')),
        { numRuns: 3000, seed: 23 },
      );
      const script =
        '$r=[];foreach(json_decode(stream_get_contents(STDIN)) as $u){$r[]=parse_url($u);}echo json_encode($r);';
      const run = spawnSync(php, ['-r', script], {
        input: JSON.stringify(urls),
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
      assert.equal(run.status, 0, run.stderr);
      const expected = JSON.parse(run.stdout) as unknown[];
      const wrong = urls.filter(
        (url, i) => JSON.stringify(sortKeys(phpParseUrl(url))) !== JSON.stringify(sortKeys(expected[i])),
      );
      assert.deepEqual(
        wrong.slice(0, 12).map((url) => [url, phpParseUrl(url), expected[urls.indexOf(url)]]),
        [],
      );
    });
  });
});

function sortKeys(v: unknown): unknown {
  return v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v;
}

describe('php: buildUrl reads the endpoint as parse_url does (GET with params)', () => {
  it('sends each control character of the endpoint (placeholder values) as "_", as GE does', () => {
    const controls = [...Array(32).keys(), 0x7f].map((c) => String.fromCharCode(c));
    for (const c of controls) {
      assert.equal(buildUrl(`c1/a${c}b?x=${c}`, params('{"p":1}')), 'c1/a_b?x=_&p=1', JSON.stringify(c));
    }
    // decoded from %0A after parse_url: encoded again, as GE does; params are encoded, never replaced
    assert.equal(buildUrl('c1?x=%0A', params('{"p":"a\\nb"}')), 'c1?x=%0A&p=a%0Ab');
    // C1 controls and other non-ASCII text are left alone (Guzzle percent-encodes them later)
    assert.equal(buildUrl('c1/\u0085ü', params('{"p":1}')), 'c1/\u0085ü?p=1');
  });

  it('drops what parse_url reads as host and port or as a scheme, and the whole endpoint when it cannot read it', () => {
    assert.equal(buildUrl('c1/1:80', params('{"p":1}')), '/1:80?p=1');
    assert.equal(buildUrl('a:b/c1?y=1', params('{"p":1}')), 'b/c1?y=1&p=1');
    assert.equal(buildUrl('x:99999/c1?y=1', params('{"p":1}')), '?p=1');
    assert.equal(buildUrl('https://h:8080/a?b=1#f', params('{"p":1}')), 'https://h:8080/a?b=1&p=1#f');
  });
});
