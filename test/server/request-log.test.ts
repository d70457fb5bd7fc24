import assert from 'node:assert/strict';
import { loggableUrl } from '../../src/server/operations/request-log.js';

const TOKEN = '1-2-abcdefghijABCDEFGHIJ0123456789_-abcdefgh';

describe('server: the URL of a request log line', () => {
  it('keeps the path and the short plain values of the list options', () => {
    assert.equal(
      loggableUrl('/v2/storage/components?include=configuration,rows&limit=10&isDeleted=0'),
      '/v2/storage/components?include=configuration,rows&limit=10&isDeleted=0',
    );
  });

  it('hides every other query value, a list option value that is long, encoded or a token, and names that hold a token', () => {
    assert.equal(
      loggableUrl('/x?token=abc&%23password=p&changeDescription=hello'),
      '/x?token=[hidden]&%23password=[hidden]&changeDescription=[hidden]',
    );
    assert.equal(
      loggableUrl(`/x?limit=${'9'.repeat(65)}&include=a%2Cb&offset=${TOKEN}&${TOKEN}=1&${TOKEN}`),
      '/x?limit=[hidden]&include=[hidden]&offset=[hidden]&[hidden]=[hidden]&[hidden]',
    );
  });

  it('hides a path holding a token: the request’s own (also percent-encoded) or anything shaped like one', () => {
    assert.equal(loggableUrl(`/v2/storage/${TOKEN}`), '[hidden]');
    assert.equal(loggableUrl('/v2/storage/%73ecret-own-token', 'secret-own-token'), '[hidden]');
    assert.equal(loggableUrl('/v2/storage/short', 'sh'), '/v2/storage/short', 'too short a token text to search for');
  });

  it('cannot forge or break a line: line-breaking and invisible characters are escaped, long URLs cut', () => {
    assert.equal(loggableUrl('/a\u2028b\u202e'), '"/a\\u2028b\\u202e"');
    assert.equal(loggableUrl('/a%0Ab'), '/a%0Ab');
    const long = loggableUrl(`/${'a'.repeat(5000)}`);
    assert.equal(long.length, 301);
    assert.ok(long.endsWith('…'));
  });
});
