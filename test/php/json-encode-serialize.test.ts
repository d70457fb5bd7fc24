import assert from 'node:assert/strict';
import { decodeJson, fromPlain } from '../../src/json/index.js';
import {
  cachedKeyTexts,
  MAX_KEY_TEXTS,
  md5Hex,
  phpJsonEncode,
  phpJsonEncodeOrFalse,
  phpSerialize,
  phpSerializeArray,
} from '../../src/php/index.js';

describe('php: json_encode', () => {
  it('encodes like PHP with default flags', () => {
    const v = decodeJson('{"x":0.1,"y":"a/b","z":"é","w":1.0,"v":[],"o":{}}');
    assert.equal(phpJsonEncode(v), '{"x":0.10000000000000001,"y":"a\\/b","z":"\\u00e9","w":1,"v":[],"o":{}}');
  });

  it('treats configuration objects as PHP arrays', () => {
    const v = fromPlain({ a: {}, b: { 0: 'x', 1: 'y' } });
    assert.equal(phpJsonEncode(v, { objectsAreArrays: true }), '{"a":[],"b":["x","y"]}');
  });

  it('escapes control characters in lowercase hex and keeps DEL', () => {
    assert.equal(phpJsonEncode('\u0001\u007f\t'), '"\\u0001\u007f\\t"');
  });

  it('fails as a whole on INF or NAN anywhere, however deep (false; empty as text), never writing INF', () => {
    for (const json of ['1e400', '-1e400', '[1,[2,[3,1e999]]]', '{"a":"sibling","b":{"c":[-1e400]},"d":1}']) {
      assert.equal(phpJsonEncodeOrFalse(decodeJson(json)), false, json);
      assert.equal(phpJsonEncode(decodeJson(json)), '', json);
    }
    assert.equal(
      phpJsonEncode(decodeJson('[1.7976931348623157e308,-5e-324]')),
      '[1.7976931348623157e+308,-4.9406564584124654e-324]',
    );
  });
});

describe('php: serialize', () => {
  it('matches the EX010 row id', () => {
    const row = decodeJson('{"id":123,"name":"John Doe","tags":["active","admin"]}');
    assert.equal(
      phpSerialize(row),
      'O:8:"stdClass":3:{s:2:"id";i:123;s:4:"name";s:8:"John Doe";s:4:"tags";a:2:{i:0;s:6:"active";i:1;s:5:"admin";}}',
    );
    assert.equal(md5Hex(phpSerialize(row)), '3ca896f39b257a4f2d2f4784e7680c87');
  });

  it('serialises scalars like PHP', () => {
    assert.equal(
      phpSerialize(decodeJson('[null,true,false,1.0,0.1,1e25,-0.0,"é"]')),
      'a:8:{i:0;N;i:1;b:1;i:2;b:0;i:3;d:1;i:4;d:0.10000000000000001;i:5;d:1.0000000000000001E+25;i:6;d:-0;i:7;s:2:"é";}',
    );
  });

  it('property names: byte lengths, integer keys of configuration arrays, long lists', () => {
    const row = decodeJson(
      '{"é":1,"7":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65]}',
    );
    const list = Array.from({ length: 66 }, (_, i) => `i:${i};i:${i};`).join('');
    assert.equal(phpSerialize(row), `O:8:"stdClass":2:{s:2:"é";i:1;s:1:"7";a:66:{${list}}}`);
    assert.equal(phpSerializeArray(row), `a:2:{s:2:"é";i:1;i:7;a:66:{${list}}}`);
  });

  it('a response with ever new property names keeps the cache of key texts bounded, and every text right', () => {
    // the attack: every record has names never seen before
    for (let i = 0; i < 3 * MAX_KEY_TEXTS; i++) {
      const key = `k${i}é`;
      assert.equal(phpSerialize(new Map([[key, i]])), `O:8:"stdClass":1:{s:${key.length + 1}:"${key}";i:${i};}`);
      assert.ok(cachedKeyTexts() <= MAX_KEY_TEXTS);
    }
  });
});
