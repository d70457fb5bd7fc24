import assert from 'node:assert/strict';
import { decodeJson, JsonFloat, type JsonObject } from '../../src/json/index.js';
import { asPhpArray, isIntegerKey, phpArrayKey, phpArrayMerge, phpSerializeArray } from '../../src/php/index.js';

describe('PHP array keys', () => {
  it('treats canonical decimal integers within int64 as integer keys', () => {
    for (const key of ['0', '7', '-1', '9007199254740993', '9223372036854775807', '-9223372036854775808'])
      assert.equal(isIntegerKey(key), true, key);
    for (const key of ['', '-0', '01', '1.5', ' 1', '1e3', '9223372036854775808', '-9223372036854775809'])
      assert.equal(isIntegerKey(key), false, key);
    // checked with PHP 7.4: serialize(json_decode('{…}', true))
    assert.equal(
      phpSerializeArray(decodeJson('{"9007199254740993":"x","-9223372036854775808":"y","9223372036854775808":"z"}')),
      'a:3:{i:9007199254740993;s:1:"x";i:-9223372036854775808;s:1:"y";s:19:"9223372036854775808";s:1:"z";}',
    );
  });

  it('array_merge renumbers integer keys of both arrays and lets string keys of the second win in place', () => {
    const merged = phpArrayMerge(
      decodeJson('{"5":"five","a":"A","7":"seven"}') as JsonObject,
      decodeJson('{"a":"A2","9":"nine","01":"s"}') as JsonObject,
    );
    assert.deepEqual(
      [...merged],
      [
        ['0', 'five'],
        ['a', 'A2'],
        ['1', 'seven'],
        ['2', 'nine'],
        ['01', 's'],
      ],
    );
  });

  it('a configuration value as a PHP array: lists get index keys, scalars are no array', () => {
    assert.deepEqual(
      [...asPhpArray(decodeJson('["a","b"]'))!],
      [
        ['0', 'a'],
        ['1', 'b'],
      ],
    );
    const object = decodeJson('{"x":1}');
    assert.equal(asPhpArray(object), object);
    assert.equal(asPhpArray('x'), null);
    assert.equal(asPhpArray(undefined), null);
  });

  it('the key a scalar becomes (checked with PHP 7.4: $a[null], $a[true], $a[false], $a[1.7])', () => {
    assert.deepEqual(
      [null, true, false, new JsonFloat(1.7), 5, 'x'].map((v) => phpArrayKey(v)),
      ['', '1', '0', '1', '5', 'x'],
    );
    assert.equal(phpArrayKey(decodeJson('[]')), undefined);
    assert.equal(phpArrayKey(decodeJson('{}')), undefined);
  });
});
