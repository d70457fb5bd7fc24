import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { UserError } from '../../../src/common/errors.js';
import { UserFunctions } from '../../../src/extractor/functions/user-functions.js';
import { buildHttpRequest } from '../../../src/extractor/http/request-builder.js';
import { fromPlain, type JsonValue } from '../../../src/json/index.js';
import { phpStringBytes, phpStringFromBytes, phpUrlencode } from '../../../src/php/index.js';
import { apiSettings } from '../../support/api.js';

const fns = new UserFunctions();
const F = (name: string, ...args: unknown[]) => ({ function: name, args });
const run = (call: unknown): JsonValue => fns.evaluate(fromPlain(call), {});

/**
 * Raw (binary) digests flowing into other functions. Every expected value below is what the
 * reference Generic Extractor sent for the same user functions.
 */
describe('raw digests (binary PHP strings) in user functions', () => {
  it('base64-encodes raw md5, sha1, hash and hash_hmac bytes as GE does', () => {
    assert.equal(
      run(F('base64_encode', F('hash_hmac', 'sha256', 'data', 'key', true))),
      'UDH+PZicbRU3oBP6bnOdojRj/a7DtwE32Cjjas4iG9A=',
    );
    assert.equal(run(F('base64_encode', F('md5', 'abc', true))), 'kAFQmDzST7DWlj99KOF/cg==');
    assert.equal(run(F('base64_encode', F('sha1', 'abc', true))), 'qZk+NkcGgWq6PiVxeFDCbJzQ2J0=');
    assert.equal(
      run(F('base64_encode', F('hash', 'sha256', 'abc', true))),
      'ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=',
    );
    assert.equal(
      run(F('base64_encode', F('hash_hmac', 'sha256', 'é', 'ключ', true))),
      '5MSqr3LdLga2uM0Xkb6H1K+/yE3WtL9E2man7FoMKm4=',
    );
  });

  it('reads the raw flag with PHP bool coercion (1 and "false" are true, 0 is false)', () => {
    assert.equal(run(F('base64_encode', F('md5', 'abc', 1))), 'kAFQmDzST7DWlj99KOF/cg==');
    assert.equal(run(F('base64_encode', F('hash', 'md5', 'abc', 'false'))), 'kAFQmDzST7DWlj99KOF/cg==');
    assert.equal(
      run(F('base64_encode', F('sha1', 'abc', 0))),
      'YTk5OTNlMzY0NzA2ODE2YWJhM2UyNTcxNzg1MGMyNmM5Y2QwZDg5ZA==',
    );
  });

  it('keeps raw bytes through concat, sprintf, implode, ifempty and into further hashes and keys', () => {
    assert.equal(run(F('base64_encode', F('concat', F('md5', 'abc', true), 'é'))), 'kAFQmDzST7DWlj99KOF/csOp');
    assert.equal(
      run(F('base64_encode', F('sprintf', '%s-%s', F('md5', 'abc', true), 'x'))),
      'kAFQmDzST7DWlj99KOF/ci14',
    );
    assert.equal(
      run(F('base64_encode', F('implode', '', [F('md5', 'a', true), F('md5', 'b', true)]))),
      'DMF1ucDxtqgxw5niaXcmYZLrX/7mri/sOtccd3UxV48=',
    );
    assert.equal(run(F('base64_encode', F('ifempty', '', F('md5', 'abc', true)))), 'kAFQmDzST7DWlj99KOF/cg==');
    assert.equal(run(F('md5', F('md5', 'abc', true))), 'af5da9f45af7a300e3aded972f8ff687');
    assert.equal(
      run(F('hash_hmac', 'sha256', 'data', F('md5', 'k', true))),
      '7915c0ac90bb28258827c15abf7ffb678d28f958bafdf535b2d07bcfc8330fb7',
    );
    assert.equal(run(F('sha1', F('hash_hmac', 'sha1', 'x', 'y', true))), '8fda1f2c09fa205a98749ed860152bd188c8e0a4');
    assert.equal(
      run(F('hash', 'sha256', F('concat', F('sha1', 'abc', true), F('md5', 'abc', true)))),
      'b94f87bf6186c5af9bfa1b808918ed1099e27bb4ceaf554d469505c849d21c74',
    );
  });

  it('url-encodes a raw digest in a query as its bytes', () => {
    const params = new Map([['r1', run(F('md5', 'abc', true))]]);
    const request = buildHttpRequest(
      { endpoint: 'sig', params, method: 'GET' },
      new Map(),
      apiSettings({ baseUrl: 'http://h/' }),
    );
    assert.equal(request.url, 'http://h/sig?r1=%90%01P%98%3C%D2O%B0%D6%96%3F%7D%28%E1%7Fr');
  });

  it('refuses a raw digest in a JSON POST body, as GE fails to encode it, instead of sending altered bytes', () => {
    const params = new Map([['sig', run(F('md5', 'abc', true))]]);
    assert.throws(
      () =>
        buildHttpRequest({ endpoint: 'sig', params, method: 'POST' }, new Map(), apiSettings({ baseUrl: 'http://h/' })),
      (error: Error) => error instanceof UserError && /params\.sig holds raw bytes/.test(error.message),
    );
    const encoded = new Map([
      ['sig', run(F('base64_encode', F('md5', 'abc', true)))],
      ['emoji', '💩'],
    ]);
    assert.equal(
      buildHttpRequest(
        { endpoint: 'sig', params: encoded, method: 'POST' },
        new Map(),
        apiSettings({ baseUrl: 'http://h/' }),
      ).body,
      '{"sig":"kAFQmDzST7DWlj99KOF\\/cg==","emoji":"\\ud83d\\udca9"}',
    );
  });

  it('round-trips any bytes through a string exactly, and leaves UTF-8 text as text', () => {
    for (let i = 0; i < 200; i++) {
      const bytes = randomBytes(i % 40);
      assert.deepEqual(phpStringBytes(phpStringFromBytes(bytes)), bytes);
    }
    const edge = Buffer.from([
      0xed, 0xa0, 0x80, 0xf4, 0x90, 0x80, 0x80, 0xc0, 0xaf, 0xe0, 0x80, 0xaf, 0xf0, 0x9f, 0x98, 0x80, 0xc3,
    ]);
    assert.deepEqual(phpStringBytes(phpStringFromBytes(edge)), edge);
    assert.equal(phpStringFromBytes(Buffer.from('😀 é', 'utf8')), '😀 é');
    assert.deepEqual(phpStringBytes('😀 é'), Buffer.from('😀 é', 'utf8'));
  });

  it('encodes any lone surrogate in a URL instead of throwing', () => {
    assert.equal(phpUrlencode('a\udc90\ud83d'), 'a%90%EF%BF%BD');
    const request = buildHttpRequest(
      { endpoint: 'x/\ud83d/\udcff', params: new Map(), method: 'GET' },
      new Map(),
      apiSettings({ baseUrl: 'http://h/' }),
    );
    assert.equal(request.url, 'http://h/x/%EF%BF%BD/%FF');
  });
});
