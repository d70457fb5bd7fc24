import assert from 'node:assert/strict';
import { decodeJson, JsonSyntaxError, JsonFloat } from '../../src/json/index.js';

describe('json: decoding', () => {
  it('keeps the key order of integer-like keys', () => {
    const v = decodeJson('{"b":1,"10":2,"1":3}') as Map<string, unknown>;
    assert.deepEqual([...v.keys()], ['b', '10', '1']);
  });

  it('keeps the first position and the last value of a duplicate key', () => {
    const v = decodeJson('{"a":1,"b":2,"a":3}') as Map<string, unknown>;
    assert.deepEqual(
      [...v.entries()],
      [
        ['a', 3],
        ['b', 2],
      ],
    );
  });

  it('distinguishes integers from floats and keeps int64 exactly', () => {
    const v = decodeJson('[1, 1.0, 9007199254740993, -0, -0.0, 123456789012345678901, 1e2]') as unknown[];
    assert.equal(v[0], 1);
    assert.ok(v[1] instanceof JsonFloat && v[1].value === 1);
    assert.equal(v[2], 9007199254740993n);
    assert.ok(Object.is(v[3], 0));
    assert.ok(v[4] instanceof JsonFloat && Object.is(v[4].value, -0));
    assert.ok(v[5] instanceof JsonFloat);
    assert.ok(v[6] instanceof JsonFloat && v[6].value === 100);
  });

  it('decodes escapes including surrogate pairs', () => {
    assert.equal(decodeJson('"a\\u00e9\\ud83d\\ude00\\n\\/"'), 'aé😀\n/');
  });

  for (const bad of ['', '{', '[1,]', '{"a":1,}', '01', '1.', '"\\ud800"', '"a\nb"', 'nul', '[1] x', "{'a':1}"]) {
    it(`rejects ${JSON.stringify(bad)}`, () => assert.throws(() => decodeJson(bad), JsonSyntaxError));
  }

  it('names the line and column of a syntax error (1-based, as an editor shows them), and keeps the offset', () => {
    const cases: Array<[string, number, number, RegExp]> = [
      ['{\n  "a": 1,\n}', 3, 1, /^Syntax error: property name expected at line 3, column 1$/],
      ['{"a": tru}', 1, 7, /^Syntax error: unexpected character 't' at line 1, column 7$/],
      ['[1,\r\n 2,\r\n x]', 3, 2, /at line 3, column 2$/],
      ['{\n"a":', 2, 5, /at the end of the input \(line 2, column 5\)$/],
    ];
    for (const [text, line, column, message] of cases) {
      assert.throws(
        () => decodeJson(text),
        (e: JsonSyntaxError) => {
          assert.equal(e.line, line, JSON.stringify(text));
          assert.equal(e.column, column, JSON.stringify(text));
          assert.equal(
            e.position,
            text
              .split('\n')
              .slice(0, line - 1)
              .join('\n').length +
              (line > 1 ? 1 : 0) +
              column -
              1,
          );
          assert.match(e.message, message);
          return true;
        },
      );
    }
  });

  it('reads names repeated from record to record as written, escapes and control characters included', () => {
    // the second record's names sit where the first one's were: each must still be read from its own text
    const v = decodeJson(
      '[{"id":1,"a\\"b":2,"ab":3,"":4},{"id":5,"a\\"b":6,"ab\\u0022":7,"":8},{"i\\u0064":9,"ab":10,"x":11}]',
    ) as Array<Map<string, unknown>>;
    assert.deepEqual(
      v.map((record) => [...record.entries()]),
      [
        [
          ['id', 1],
          ['a"b', 2],
          ['ab', 3],
          ['', 4],
        ],
        [
          ['id', 5],
          ['a"b', 6],
          ['ab"', 7],
          ['', 8],
        ],
        [
          ['id', 9],
          ['ab', 10],
          ['x', 11],
        ],
      ],
    );
    for (const bad of ['[{"id":1},{"id\u0001":2}]', '[{"ab":1},{"ab', '[{"a\\"b":1},{"a"b":1}]'])
      assert.throws(() => decodeJson(bad), JsonSyntaxError, bad);
  });

  it('reads integers of up to 15 digits and beyond exactly', () => {
    for (const text of ['0', '7', '-7', '999999999999999', '-999999999999999', '1000000000000000', '-1000000000000001'])
      assert.equal(decodeJson(text), Number(text), text);
    assert.equal(decodeJson('9223372036854775807'), 9223372036854775807n);
    assert.ok(decodeJson('9223372036854775808') instanceof JsonFloat);
  });

  it('limits the nesting depth like PHP', () => {
    assert.throws(() => decodeJson('['.repeat(600) + ']'.repeat(600)), /nesting depth/);
    assert.doesNotThrow(() => decodeJson('['.repeat(500) + ']'.repeat(500)));
  });
});
