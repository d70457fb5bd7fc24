import assert from 'node:assert/strict';
import { UserError } from '../../../src/common/errors.js';
import type { HttpResponse } from '../../../src/extractor/http/types.js';
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  LARGEST_MAX_RESPONSE_BYTES,
  maxResponseBytesFromEnv,
} from '../../../src/extractor/http/response-size.js';
import { decodeResponse } from '../../../src/extractor/response/decode-response.js';

const request = { method: 'GET' as const, url: 'http://api.test/items', headers: [] };
const response = (body: Buffer, status = 200): HttpResponse => ({
  status,
  statusMessage: 'OK',
  headers: {},
  body,
  attempts: 1,
});

describe('response size limit: GEX_MAX_RESPONSE_SIZE', () => {
  it('defaults to 256 MiB, below the longest string V8 can decode a body into', () => {
    assert.equal(maxResponseBytesFromEnv({}), 256 * 1024 * 1024);
    assert.equal(DEFAULT_MAX_RESPONSE_BYTES, 268435456);
    assert.ok(DEFAULT_MAX_RESPONSE_BYTES < LARGEST_MAX_RESPONSE_BYTES);
  });

  it('reads bytes and K, M, G (binary) suffixes', () => {
    assert.equal(maxResponseBytesFromEnv({ GEX_MAX_RESPONSE_SIZE: '4096' }), 4096);
    assert.equal(maxResponseBytesFromEnv({ GEX_MAX_RESPONSE_SIZE: '8M' }), 8 * 1024 * 1024);
    assert.equal(maxResponseBytesFromEnv({ GEX_MAX_RESPONSE_SIZE: '64k' }), 64 * 1024);
    assert.equal(maxResponseBytesFromEnv({ GEX_MAX_RESPONSE_SIZE: '511MiB' }), 511 * 1024 * 1024);
  });

  it('refuses nonsense, zero, and limits no body could be decoded under', () => {
    for (const value of ['0', '-5', 'lots', '1.5M', '10T', '512M', '1G', '100']) {
      assert.throws(
        () => maxResponseBytesFromEnv({ GEX_MAX_RESPONSE_SIZE: value }),
        (e: Error) => e instanceof UserError && /^GEX_MAX_RESPONSE_SIZE must be a size from 1K to 511M/.test(e.message),
        value,
      );
    }
  });
});

describe('response decoding: only a malformed body is reported as one', () => {
  it("bad UTF-8 and bad JSON are the API's: user errors saying so", () => {
    assert.throws(
      () => decodeResponse(response(Buffer.from([0x5b, 0xff, 0x5d])), request, []),
      /Invalid JSON response from API: the body is not valid UTF-8 \(GET http:\/\/api\.test\/items, status 200\)/,
    );
    assert.throws(
      () => decodeResponse(response(Buffer.from('[1,')), request, []),
      /Invalid JSON response from API: Syntax error: .* at the end of the input/,
    );
  });

  it('with ignoreErrors, a malformed body of an ignored status becomes errorData', () => {
    const decoded = decodeResponse(response(Buffer.from('<html>down</html>'), 503), request, [503]);
    assert.deepEqual(decoded, new Map([['errorData', '<html>down</html>']]));
  });

  it('with ignoreErrors, an ignored status whose body is JSON null fails the run as GE does (its data is nothing)', () => {
    assert.throws(
      () => decodeResponse(response(Buffer.from('null'), 404), request, [404]),
      (error: Error) => error instanceof UserError && /^The API request failed: \[404\]/.test(error.message),
    );
    assert.deepEqual(decodeResponse(response(Buffer.from('{}'), 404), request, [404]), new Map());
    assert.equal(decodeResponse(response(Buffer.from('null'), 200), request, [404]), null);
  });

  it('any other failure is not blamed on the body (no "not valid UTF-8", no errorData)', () => {
    // a body the decoder cannot even take: a fault of gex, not of the API
    const broken = { length: 3 } as unknown as Buffer;
    for (const [status, ignore] of [
      [200, []],
      [503, [503]],
    ] as const) {
      assert.throws(
        () => decodeResponse(response(broken, status), request, [...ignore]),
        (e: Error) => {
          assert.ok(!(e instanceof UserError), `reported as a user error: ${e.message}`);
          assert.doesNotMatch(e.message, /UTF-8|Invalid JSON/);
          return true;
        },
      );
    }
  });
});
