import assert from 'node:assert/strict';
import { decodeJson, fromPlain, type JsonObject } from '../../src/json/index.js';
import { phpHttpBuildQuery, phpRawUrlencode, phpUrldecode, phpUrlencode } from '../../src/php/index.js';

describe('php: query strings', () => {
  it('http_build_query matches PHP output', () => {
    const params = decodeJson(
      '{"a":true,"b":false,"c":null,"d":[],"e":1.5,"f":"x y~*\'()!","g":["x","y"],"h":{"k":{"z":1}}}',
    ) as JsonObject;
    assert.equal(
      phpHttpBuildQuery(params),
      'a=1&b=0&e=1.5&f=x+y%7E%2A%27%28%29%21&g%5B0%5D=x&g%5B1%5D=y&h%5Bk%5D%5Bz%5D=1',
    );
    assert.equal(phpHttpBuildQuery(decodeJson('{"u":"ú"}') as JsonObject), 'u=%C3%BA');
    assert.equal(phpHttpBuildQuery(decodeJson('{"f":1e20}') as JsonObject), 'f=1.0E%2B20');
  });

  it('http_build_query RFC 3986: nested keys with encoded brackets, nulls skipped, booleans 1/0', () => {
    const params = fromPlain({ a: 'x y~', b: ['1', null, '2'], c: { d: true, e: false }, n: null }) as JsonObject;
    assert.equal(phpHttpBuildQuery(params, 'RFC3986'), 'a=x%20y~&b%5B0%5D=1&b%5B2%5D=2&c%5Bd%5D=1&c%5Be%5D=0');
  });

  it('urlencode and rawurlencode differ on space and tilde', () => {
    assert.equal(phpUrlencode('a b~'), 'a+b%7E');
    assert.equal(phpRawUrlencode('a b~'), 'a%20b~');
  });

  it('urldecode turns plus into space', () => {
    assert.equal(phpUrldecode('a+b%20c%zz'), 'a b c%zz');
  });

  it('urldecode is byte for byte: invalid UTF-8 and raw bytes survive a decode and an encode', () => {
    // %FF is one byte PHP keeps; a lone surrogate is how a raw byte lives in a string (byte-string.ts)
    assert.equal(phpUrlencode(phpUrldecode('%FF%C3%BA%E2')), '%FF%C3%BA%E2');
    assert.equal(phpUrlencode(phpUrldecode('\udcff%41😀')), '%FFA%F0%9F%98%80');
    assert.equal(phpUrldecode('😀%20é'), '😀 é');
  });
});
