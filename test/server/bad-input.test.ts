import assert from 'node:assert/strict';
import net from 'node:net';
import { fromPlain } from '../../src/json/index.js';
import { MAX_ADDRESSABLE_ID_LENGTH } from '../../src/store/addressable-id.js';
import {
  BRANCH,
  COMPONENT,
  configsPath,
  TestServer,
  type ApiResponse,
  type Json,
} from '../support/storage-api-server.js';

const CONFIGS = `${BRANCH}/components/${COMPONENT}/configs`;

/** Keboola's error body: `{"error","code","status":"error","exceptionId"}`, plus gex's catalogue code `gexCode`. */
function assertKeboolaError(
  status: number,
  contentType: string | null,
  body: Json,
  expected: { status: number; code?: string; error?: RegExp },
): void {
  assert.equal(status, expected.status, JSON.stringify(body));
  assert.equal(contentType, 'application/json');
  assert.equal(typeof body.error, 'string');
  assert.equal(typeof body.code, 'string');
  assert.equal(body.status, 'error');
  assert.match(body.exceptionId, /^exception-[0-9a-f]{32}$/);
  assert.match(body.gexCode, /^GEX_[A-Z_]+$/);
  if (expected.code) assert.equal(body.code, expected.code);
  if (expected.error) assert.match(body.error, expected.error);
}

function assertError(res: ApiResponse, expected: { status: number; code?: string; error?: RegExp }): void {
  assertKeboolaError(res.status, res.contentType, res.body, expected);
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Json;
}

/** HTTP/1.1 responses one after another in `bytes` (each with a Content-Length). */
function parseResponses(bytes: Buffer): RawResponse[] {
  const responses: RawResponse[] = [];
  let rest = bytes;
  while (rest.length > 0) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0) throw new Error(`not an HTTP response: ${JSON.stringify(rest.toString('utf8', 0, 300))}`);
    const [statusLine, ...lines] = rest.toString('utf8', 0, headEnd).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = Number(headers['content-length']);
    const body = rest.subarray(headEnd + 4, headEnd + 4 + length);
    responses.push({
      status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)![1]),
      headers,
      body: JSON.parse(body.toString('utf8')),
    });
    rest = rest.subarray(headEnd + 4 + length);
  }
  return responses;
}

/**
 * Writes `request` as raw bytes on a new connection; resolves with every response the server
 * sent once it has closed the connection or `expected` responses have arrived.
 */
function rawRequest(port: number, request: string, expected = 1): Promise<RawResponse[]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      let responses: RawResponse[];
      try {
        responses = parseResponses(Buffer.concat(chunks));
      } catch (e) {
        if (!closed) return; // a response still arriving
        settled = true;
        reject(e instanceof Error ? e : new Error(String(e)));
        return;
      }
      if (!closed && responses.length < expected) return;
      settled = true;
      socket.destroy();
      resolve(responses);
    };
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      finish(false);
    });
    socket.on('close', () => finish(true));
    socket.on('error', (e) => (settled ? undefined : reject(e)));
    socket.write(request);
  });
}

function assertRawError(res: RawResponse, expected: { status: number; code?: string; error?: RegExp }): void {
  assertKeboolaError(res.status, res.headers['content-type'] ?? null, res.body, expected);
}

describe("bad input gets a 4xx in Keboola's error shape, never a 500", function () {
  this.timeout(30_000);
  let server: TestServer;
  let port: number;
  let configId: string;
  before(async () => {
    server = await TestServer.start({ requestTimeoutMs: 1000 });
    port = Number(new URL(server.baseUrl).port);
    configId = (await server.createConfig({ name: 'Existing' })).id;
  });
  after(async () => server?.close());

  it('refuses limit and offset beyond int64 (and beyond what a number holds exactly) with 400', async () => {
    for (const query of [
      'limit=99999999999999999999',
      'offset=99999999999999999999',
      'limit=9223372036854775808',
      'offset=18446744073709551616',
    ]) {
      assertError(await server.get(`${configsPath(configId, 'versions')}?${query}`), {
        status: 400,
        error: /limit|offset/,
      });
    }
    const huge = await server.get(`${configsPath(configId, 'versions')}?limit=9007199254740991&offset=0`);
    assert.equal(huge.status, 200, huge.text);
    assert.equal(huge.body.length, 1);
    const farOffset = await server.get(`${configsPath(configId, 'versions')}?offset=9007199254740991`);
    assert.equal(farOffset.status, 200, farOffset.text);
    assert.deepEqual(farOffset.body, []);
  });

  it('answers a version or metadata id beyond int64 in the path with 4xx, not 500', async () => {
    assertError(await server.get(configsPath(configId, 'versions', '99999999999999999999')), {
      status: 400,
      error: /Invalid version/,
    });
    assertError(await server.delete(`${configsPath(configId)}/metadata/99999999999999999999`), {
      status: 404,
      code: 'notFound',
    });
  });

  it('refuses a JSON body that is not valid UTF-8 with 400 instead of storing U+FFFD', async () => {
    const bytes = Buffer.concat([Buffer.from('{"name":"bad '), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const res = await fetch(server.baseUrl + CONFIGS, {
      method: 'POST',
      headers: { 'X-StorageApi-Token': server.token, 'content-type': 'application/json' },
      body: bytes,
    });
    assertKeboolaError(res.status, res.headers.get('content-type'), await res.json(), {
      status: 400,
      code: 'validation.invalidEncoding',
      error: /not valid UTF-8/,
    });
    const form = Buffer.concat([Buffer.from('name=bad'), Buffer.from([0xc3, 0x28])]);
    const formRes = await fetch(server.baseUrl + CONFIGS, {
      method: 'POST',
      headers: { 'X-StorageApi-Token': server.token, 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    assertKeboolaError(formRes.status, formRes.headers.get('content-type'), await formRes.json(), {
      status: 400,
      code: 'validation.invalidEncoding',
    });
    const list = await server.get(CONFIGS);
    assert.deepEqual(
      list.body.map((c: Json) => c.name),
      ['Existing'],
      'nothing was stored',
    );
  });

  it('answers a bad URL encoding (%zz) with 400', async () => {
    assertError(await server.get(`${CONFIGS}/%zz`), { status: 400, code: 'storage.invalidRequest', error: /URL/ });
  });

  it('answers invalid JSON with 400 and an unsupported media type with 415', async () => {
    assertError(await server.post(CONFIGS, { rawJson: '{"name":' }), { status: 400, code: 'validation.invalidJson' });
    assertError(await server.post(CONFIGS, { body: 'name=x', headers: { 'content-type': 'text/xml' } }), {
      status: 415,
      code: 'storage.unsupportedMediaType',
    });
    assertError(await server.post(CONFIGS, { body: 'name=x', headers: { 'content-type': '/' } }), {
      status: 415,
      code: 'storage.unsupportedMediaType',
    });
  });

  it('answers a path parameter longer than the router takes with 414 naming the limit', async () => {
    assertError(await server.get(configsPath('x'.repeat(MAX_ADDRESSABLE_ID_LENGTH + 1))), {
      status: 414,
      error: new RegExp(`${MAX_ADDRESSABLE_ID_LENGTH} characters`),
    });
  });

  it('answers a Content-Length shorter than the body with 400: the rest is not taken for a request, the connection is closed', async () => {
    const body = '{"name":"x"}GARBAGE / HTTP/1.1\r\n\r\n';
    const responses = await rawRequest(
      port,
      `POST ${CONFIGS} HTTP/1.1\r\nHost: x\r\nX-StorageApi-Token: ${server.token}\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n${body}`,
      2,
    );
    // node reads the garbage while the first request is handled and closes the connection at once
    assert.equal(responses.length, 1, JSON.stringify(responses));
    assertRawError(responses[0], { status: 400, code: 'storage.invalidRequest', error: /not valid HTTP/ });
    assert.equal(responses[0].headers.connection, 'close');
    assert.deepEqual(
      (await server.get(CONFIGS)).body.map((c: Json) => c.name),
      ['Existing'],
      'nothing was created',
    );
  });

  it('answers an invalid or doubled Content-Length with 400', async () => {
    const [invalid] = await rawRequest(port, `POST ${CONFIGS} HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}`);
    assertRawError(invalid, { status: 400, code: 'storage.invalidRequest', error: /Content-Length/ });
    const [doubled] = await rawRequest(
      port,
      `POST ${CONFIGS} HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
    );
    assertRawError(doubled, { status: 400, code: 'storage.invalidRequest', error: /Content-Length/ });
  });

  it('answers a Content-Length longer than the body with 408 once the request time is up, not a connection held forever', async () => {
    const started = performance.now();
    const [res] = await rawRequest(
      port,
      `POST ${CONFIGS} HTTP/1.1\r\nHost: x\r\nX-StorageApi-Token: ${server.token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":"x"}`,
    );
    assertRawError(res, { status: 408, code: 'storage.requestTimeout' });
    assert.ok(performance.now() - started < 10_000);
  });

  it('answers headers too large with 431', async () => {
    const [res] = await rawRequest(
      port,
      `GET ${CONFIGS} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`,
    );
    assertRawError(res, { status: 431, code: 'storage.headersTooLarge' });
  });

  it('refuses at create an id too long to be addressed in a URL later, naming the limit', async () => {
    const tooLong = 'c'.repeat(MAX_ADDRESSABLE_ID_LENGTH + 1);
    assertError(await server.post(CONFIGS, { json: { name: 'x', configurationId: tooLong } }), {
      status: 400,
      error: new RegExp(`${MAX_ADDRESSABLE_ID_LENGTH} characters`),
    });
    // counted once URL-encoded: 400 characters of "é" are 2,400 in a URL
    assertError(await server.post(CONFIGS, { json: { name: 'x', configurationId: 'é'.repeat(400) } }), {
      status: 400,
      error: /URL-encoded/,
    });
    assertError(await server.post(`${configsPath(configId)}/rows`, { json: { rowId: tooLong } }), {
      status: 400,
      error: new RegExp(`${MAX_ADDRESSABLE_ID_LENGTH} characters`),
    });

    await assert.rejects(
      server.backend.importComponents(fromPlain([{ id: 'k'.repeat(MAX_ADDRESSABLE_ID_LENGTH + 1), type: 'writer' }])),
      new RegExp(`at most ${MAX_ADDRESSABLE_ID_LENGTH} characters`),
    );
    assert.ok(
      (await server.backend.listComponents()).every((c) => c.id.length <= MAX_ADDRESSABLE_ID_LENGTH),
      'the component was not registered',
    );
    const longest = 'c'.repeat(MAX_ADDRESSABLE_ID_LENGTH);
    assert.equal((await server.post(CONFIGS, { json: { name: 'x', configurationId: longest } })).status, 201);
    const read = await server.get(configsPath(longest));
    assert.equal(read.status, 200, 'the longest id allowed can be addressed');
    assert.equal(read.body.id, longest);
    const row = await server.post(`${configsPath(longest)}/rows`, { json: { rowId: longest } });
    assert.equal(row.status, 201, row.text);
    assert.equal((await server.get(`${configsPath(longest, 'rows', longest)}`)).status, 200);
  });

  it('refuses at create the ids ".", ".." (path steps in any URL) and ids with a NUL byte (no database text holds one)', async () => {
    for (const id of ['.', '..', 'a\u0000b']) {
      assertError(await server.post(CONFIGS, { json: { name: 'x', configurationId: id } }), {
        status: 400,
        error: /path step|NUL byte/,
      });
      assertError(await server.post(`${configsPath(configId)}/rows`, { json: { rowId: id } }), {
        status: 400,
        error: /path step|NUL byte/,
      });
    }
    await assert.rejects(server.backend.importComponents(fromPlain([{ id: '..', type: 'writer' }])), /path step/);
    // names built from such characters are ids like any other
    assert.equal((await server.post(CONFIGS, { json: { name: 'x', configurationId: '...' } })).status, 201);
  });
});
