import assert from 'node:assert/strict';
import { startFixtureServer, type FixtureServer } from '../../src/fixture-server/fixture-server.js';
import { runExtraction } from '../support/extraction.js';

/** The bytes of a received header value (Node's server reads header bytes as Latin-1). */
const bytes = (server: FixtureServer, name: string) => Buffer.from(String(server.requests[0].headers[name]), 'latin1').toString('hex');
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

  for (const [label, value, code] of [['CR LF', 'a\r\nX-Evil: 1', 'U+000D'], ['LF', 'a\nX-Evil: 1', 'U+000A'], ['DEL', 'a\u007f', 'U+007F'], ['U+0001', 'a\u0001', 'U+0001']] as const) {
    it(`refuses a header value holding ${label} before any request is sent`, async () => {
      await assert.rejects(
        runExtraction({ api: { baseUrl: `${server.url}/`, http: { headers: { 'X-Api': value } } }, config: { jobs: [{ endpoint: 'a' }] } }),
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
