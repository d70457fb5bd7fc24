import assert from 'node:assert/strict';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { rawRequestTarget } from '../../../src/extractor/http/wire-format.js';
import { runExtraction } from '../../support/extraction.js';

/**
 * Parent values that are not URL-safe (emoji, control characters, reserved and quote characters,
 * numbers PHP formats its own way) put into child endpoints through placeholders. The expected
 * request targets are those the reference Generic Extractor sent for the same records.
 */
describe('placeholder values in child request URLs', () => {
  let server: FixtureServer;
  const ids: unknown[] = [
    '\u0001\u001f',
    '😀 é',
    'a\u0000b',
    'nl\n\ttab\u007f\u0080',
    '<>"`|^{}[]\\',
    1.5,
    1e20,
    // eslint-disable-next-line no-loss-of-precision -- the literal's rounding is what is tested
    12345678901234567890,
    true,
    false,
    '',
    'é \u2028',
    'a?b#c',
    '%2F%zz%',
    ' lead ',
    '../..',
    './a/./b',
    "@:;=,+$!*'()&",
    '\u200b\ufeff',
  ];

  before(async () => {
    server = await startFixtureServer({
      handler: (r) => {
        if (r.url === '/parents') return { body: ids.map((id) => ({ id })) };
        // a parent body with an unpaired surrogate escape (a cut emoji), sent as raw JSON text
        if (r.url === '/broken-parents')
          return {
            body: String.raw`[{"id":"\ud83d"},{"id":"a\u00e9b\u0001"},{"id":"é raw/x"},{"id":"\ud83d\ude00ok"},{"id":"\uD83Cz\u0000"}]`,
          };
        return { body: [{ ok: 1 }] };
      },
    });
  });
  after(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });

  it('sends the request targets GE sends, in path and query, without failing', async () => {
    const run = await runExtraction({
      api: { baseUrl: `${server.url}/` },
      config: {
        outputBucket: 'b',
        jobs: [
          {
            endpoint: 'parents',
            children: [
              { endpoint: 'child/{id}/x', dataType: 'kids', placeholders: { id: 'id' } },
              { endpoint: 'q?v={id}&w=1', dataType: 'kids2', placeholders: { id: 'id' } },
            ],
          },
        ],
      },
    });
    assert.equal(run.result.requests, 1 + 2 * ids.length);
    const paths = [
      '/child/%01%1F/x',
      '/child/%F0%9F%98%80%20%C3%A9/x',
      '/child/a%00b/x',
      '/child/nl%0A%09tab%7F%C2%80/x',
      '/child/%3C%3E%22%60%7C%5E%7B%7D%5B%5D%5C/x',
      '/child/1.5/x',
      '/child/1.0E+20/x',
      '/child/1.2345678901235E+19/x',
      '/child/1/x',
      '/child//x',
      '/child//x',
      '/child/%C3%A9%20%E2%80%A8/x',
      '/child/a?b',
      '/child/%2F%25zz%25/x',
      '/child/%20lead%20/x',
      '/x',
      '/child/a/b/x',
      "/child/@:;=,+$!*'()&/x",
      '/child/%E2%80%8B%EF%BB%BF/x',
    ];
    const queries = [
      '/q?v=%01%1F&w=1',
      '/q?v=%F0%9F%98%80%20%C3%A9&w=1',
      '/q?v=a%00b&w=1',
      '/q?v=nl%0A%09tab%7F%C2%80&w=1',
      '/q?v=%3C%3E%22%60%7C%5E%7B%7D%5B%5D%5C&w=1',
      '/q?v=1.5&w=1',
      '/q?v=1.0E+20&w=1',
      '/q?v=1.2345678901235E+19&w=1',
      '/q?v=1&w=1',
      '/q?v=&w=1',
      '/q?v=&w=1',
      '/q?v=%C3%A9%20%E2%80%A8&w=1',
      '/q?v=a?b',
      '/q?v=%2F%25zz%25&w=1',
      '/q?v=%20lead%20&w=1',
      '/q?v=../..&w=1',
      '/q?v=./a/./b&w=1',
      // a WHATWG URL would send %27 here; GE sends the quote as is
      "/q?v=@:;=,+$!*'()&&w=1",
      '/q?v=%E2%80%8B%EF%BB%BF&w=1',
    ];
    assert.deepEqual(
      server.requests.map((r) => r.url),
      ['/parents', ...paths, ...queries],
    );
  });

  it('recovers from a parent body with an unpaired surrogate as GE does: all \\u escapes dropped, children still run', async () => {
    const run = await runExtraction({
      api: { baseUrl: `${server.url}/` },
      config: {
        outputBucket: 'b',
        jobs: [
          {
            endpoint: 'broken-parents',
            dataType: 'parents',
            children: [{ endpoint: 'child/{id}/x', dataType: 'kids', placeholders: { id: 'id' } }],
          },
        ],
      },
    });
    // request targets and the parents table as the reference Generic Extractor produced them
    assert.deepEqual(
      server.requests.map((r) => r.url),
      ['/broken-parents', '/child//x', '/child/ab/x', '/child/%C3%A9%20raw/x/x', '/child/ok/x', '/child/z/x'],
    );
    assert.equal(run.files.get('b.parents'), '"id"\n""\n"ab"\n"é raw/x"\n"ok"\n"z"\n');
  });

  it('keeps the request target as built, fragment dropped, and leaves non-ASCII to the URL parser', () => {
    assert.equal(rawRequestTarget("http://h:1/a?b='c'#frag"), "/a?b='c'");
    assert.equal(rawRequestTarget('http://h'), '/');
    assert.equal(rawRequestTarget('http://h?x=1'), '/?x=1');
    assert.equal(rawRequestTarget('http://h/a b'), undefined);
    assert.equal(rawRequestTarget('http://h/é'), undefined);
  });
});

describe('header values on the wire', () => {
  let server: FixtureServer;
  before(async () => {
    server = await startFixtureServer({ handler: () => ({ body: [{ ok: 1 }] }) });
  });
  after(() => server.close());

  it('sends a header value as its UTF-8 bytes, as GE does, instead of refusing an emoji', async () => {
    await runExtraction({
      api: {
        baseUrl: `${server.url}/`,
        http: {
          headers: {
            'X-Utf': 'é😀',
            'X-Sig': { function: 'base64_encode', args: [{ function: 'md5', args: ['abc', true] }] },
          },
        },
      },
      config: { outputBucket: 'b', jobs: [{ endpoint: 'sig' }] },
    });
    const [request] = server.requests;
    // Node parses header bytes as Latin-1: one character per byte received
    assert.deepEqual(
      Buffer.from(String(request.headers['x-utf']), 'latin1'),
      Buffer.from([0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80]),
    );
    assert.equal(request.headers['x-sig'], 'kAFQmDzST7DWlj99KOF/cg==');
  });
});
