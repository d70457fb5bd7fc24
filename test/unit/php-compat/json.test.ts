import assert from 'node:assert/strict';
import { decodeJson, JsonSyntaxError, PhpFloat, phpJsonEncode, phpSerialize, fromPlain, md5Hex } from '../../../src/php-compat/index.js';

describe('php-compat: JSON decoding', () => {
  it('keeps the key order of integer-like keys', () => {
    const v = decodeJson('{"b":1,"10":2,"1":3}') as Map<string, unknown>;
    assert.deepEqual([...v.keys()], ['b', '10', '1']);
  });

  it('keeps the first position and the last value of a duplicate key', () => {
    const v = decodeJson('{"a":1,"b":2,"a":3}') as Map<string, unknown>;
    assert.deepEqual([...v.entries()], [['a', 3], ['b', 2]]);
  });

  it('distinguishes integers from floats and keeps int64 exactly', () => {
    const v = decodeJson('[1, 1.0, 9007199254740993, -0, -0.0, 123456789012345678901, 1e2]') as unknown[];
    assert.equal(v[0], 1);
    assert.ok(v[1] instanceof PhpFloat && v[1].value === 1);
    assert.equal(v[2], 9007199254740993n);
    assert.ok(Object.is(v[3], 0));
    assert.ok(v[4] instanceof PhpFloat && Object.is(v[4].value, -0));
    assert.ok(v[5] instanceof PhpFloat);
    assert.ok(v[6] instanceof PhpFloat && v[6].value === 100);
  });

  it('decodes escapes including surrogate pairs', () => {
    assert.equal(decodeJson('"a\\u00e9\\ud83d\\ude00\\n\\/"'), 'aé😀\n/');
  });

  for (const bad of ['', '{', '[1,]', '{"a":1,}', '01', '1.', '"\\ud800"', '"a\nb"', 'nul', '[1] x', "{'a':1}"]) {
    it(`rejects ${JSON.stringify(bad)}`, () => assert.throws(() => decodeJson(bad), JsonSyntaxError));
  }

  it('limits the nesting depth like PHP', () => {
    assert.throws(() => decodeJson('['.repeat(600) + ']'.repeat(600)), /nesting depth/);
    assert.doesNotThrow(() => decodeJson('['.repeat(500) + ']'.repeat(500)));
  });
});

describe('php-compat: json_encode', () => {
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
});

describe('php-compat: serialize', () => {
  it('matches the EX010 row id', () => {
    const row = decodeJson('{"id":123,"name":"John Doe","tags":["active","admin"]}');
    assert.equal(
      phpSerialize(row),
      'O:8:"stdClass":3:{s:2:"id";i:123;s:4:"name";s:8:"John Doe";s:4:"tags";a:2:{i:0;s:6:"active";i:1;s:5:"admin";}}',
    );
    assert.equal(md5Hex(phpSerialize(row)), '3ca896f39b257a4f2d2f4784e7680c87');
  });

  it('serialises scalars like PHP', () => {
    assert.equal(phpSerialize(decodeJson('[null,true,false,1.0,0.1,1e25,-0.0,"é"]')),
      'a:8:{i:0;N;i:1;b:1;i:2;b:0;i:3;d:1;i:4;d:0.10000000000000001;i:5;d:1.0000000000000001E+25;i:6;d:-0;i:7;s:2:"é";}');
  });
});
