import assert from 'node:assert/strict';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { runExtraction } from '../../support/extraction.js';

/** The bytes of a received header value (Node's server reads header bytes as Latin-1). */
const bytes = (server: FixtureServer, name: string) =>
  Buffer.from(String(server.requests[0].headers[name]), 'latin1').toString('hex');
const utf8 = (text: string) => Buffer.from(text, 'utf8').toString('hex');

describe('header values on the wire (as GE sends them)', () => {
  let server: FixtureServer;

  beforeEach(async () => {
    server = await startFixtureServer({ handler: () => ({ body: '[1]' }) });
  });
  afterEach(() => server.close());

  it('sends non-ASCII api.http.headers and job headers as their UTF-8 bytes', async () => {
    const run = await runExtraction({
      api: { baseUrl: `${server.url}/`, http: { headers: { 'X-Api': 'é日本' } } },
      config: { jobs: [{ endpoint: 'a', headers: { 'X-Job': 'ü ñ\u0080', 'X-Tab': 'a\tb' } }] },
    });
    assert.equal(run.files.get('a'), '"data"\n"1"\n');
    // bytes GE sent for the same configuration
    assert.equal(bytes(server, 'x-api'), 'c3a9e697a5e69cac');
    assert.equal(bytes(server, 'x-job'), 'c3bc20c3b1c280');
    assert.equal(bytes(server, 'x-tab'), utf8('a\tb'));
  });

  it('cuts a value at its first NUL as GE does, so a CR LF after it is never sent (no header injection)', async () => {
    await runExtraction({
      api: { baseUrl: `${server.url}/` },
      config: { jobs: [{ endpoint: 'a', headers: { 'X-Nul': 'a\u0000\r\nX-Evil: 1' } }] },
    });
    assert.equal(server.requests.length, 1);
    assert.equal(bytes(server, 'x-nul'), '61');
    assert.equal(server.requests[0].headers['x-evil'], undefined);
  });

  for (const [label, value, code] of [
    ['CR LF', 'a\r\nX-Evil: 1', 'U+000D'],
    ['LF', 'a\nX-Evil: 1', 'U+000A'],
    ['DEL', 'a\u007f', 'U+007F'],
    ['U+0001', 'a\u0001', 'U+0001'],
  ] as const) {
    it(`refuses a header value holding ${label} before any request is sent`, async () => {
      await assert.rejects(
        runExtraction({
          api: { baseUrl: `${server.url}/`, http: { headers: { 'X-Api': value } } },
          config: { jobs: [{ endpoint: 'a' }] },
        }),
        (error: Error) => {
          assert.equal(error.name, 'ConfigError');
          assert.equal(
            error.message,
            `Invalid configuration at parameters.api.http.headers.X-Api: the header value contains the control character ${code}. Header values cannot contain control characters other than tab; remove it`,
          );
          return true;
        },
      );
      assert.equal(server.requests.length, 0);
    });
  }
});

describe('header bytes with a request body, and header names', () => {
  let server: FixtureServer;
  beforeEach(async () => {
    server = await startFixtureServer({ handler: () => ({ body: '[1]' }) });
  });
  afterEach(() => server.close());

  for (const method of ['POST', 'FORM']) {
    it(`sends a non-ASCII header of a ${method} request as its UTF-8 bytes once (not encoded again with the body)`, async () => {
      await runExtraction({
        api: { baseUrl: `${server.url}/`, http: { headers: { 'X-Api': 'Žluťoučký ü' } } },
        config: { jobs: [{ endpoint: 'a', method, params: { q: 'ü' } }] },
      });
      assert.equal(bytes(server, 'x-api'), utf8('Žluťoučký ü'));
      assert.match(server.requests[0].body, method === 'POST' ? /^\{"q":"\\u00fc"\}$/ : /^q=%C3%BC$/);
    });
  }

  it('sends a header named "0" as GE does', async () => {
    await runExtraction({
      api: { baseUrl: `${server.url}/`, http: { headers: { '0': 'x' } } },
      config: { jobs: [{ endpoint: 'a' }] },
    });
    assert.equal(server.requests[0].headers['0'], 'x');
  });

  for (const [name, problem] of [
    ['', 'the header name is empty'],
    ['a b', 'the header name "a b" holds characters a header name cannot have'],
  ]) {
    it(`refuses the header name ${JSON.stringify(name)} before any request (GE crashes or sends a broken request)`, async () => {
      await assert.rejects(
        runExtraction({
          api: { baseUrl: `${server.url}/` },
          config: { jobs: [{ endpoint: 'a', headers: { [name]: 'x' } }] },
        }),
        (error: Error) => error.name === 'ConfigError' && error.message.includes(`headers.${name}: ${problem}`),
      );
      assert.equal(server.requests.length, 0);
    });
  }
});
