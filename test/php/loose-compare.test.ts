import assert from 'node:assert/strict';
import { decodeJson } from '../../src/json/index.js';
import {
  phpCompareStrings,
  phpGreaterOrEqual,
  phpLooseEqualsString,
  phpLooseEqualStrings,
} from '../../src/php/index.js';

// Expected values are PHP 7.4.33's (GE's runtime).
describe('php: loose comparison', () => {
  it('== of strings compares numeric strings as numbers', () => {
    assert.equal(phpLooseEqualStrings('1', '01'), true);
    assert.equal(phpLooseEqualStrings('1e1', '10'), true);
    assert.equal(phpLooseEqualStrings('1 ', '1.0'), false);
    assert.equal(phpLooseEqualStrings('abc', 'ABC'), false);
  });

  it("== of a string against a boolean uses the string's truthiness", () => {
    assert.equal(phpLooseEqualsString(false, '0'), true);
    assert.equal(phpLooseEqualsString(false, ''), true);
    assert.equal(phpLooseEqualsString(false, 'a'), false);
    assert.equal(phpLooseEqualsString(true, 'a'), true);
    assert.equal(phpLooseEqualsString('NULL', 'NULL'), true);
  });

  it('<=> of strings: numeric when both are numeric, else string order', () => {
    assert.ok(phpCompareStrings('10', '9') > 0);
    assert.ok(phpCompareStrings('10', '9a') < 0);
    assert.ok(phpCompareStrings('abc', 'abd') < 0);
    assert.equal(phpCompareStrings('1e1', '10'), 0);
    assert.ok(phpCompareStrings('5 ', '6') < 0);
  });

  it('$int >= $value for any JSON value', () => {
    const values = decodeJson('[null, true, false, 3, "3", "3abc", "abc", " 2", [], [1], 2.5, {"a":1}]') as Parameters<
      typeof phpGreaterOrEqual
    >[1][];
    assert.deepEqual(
      values.map((v) => phpGreaterOrEqual(3, v)),
      [true, true, true, true, true, true, true, true, false, false, true, true],
    );
    assert.deepEqual(
      values.map((v) => phpGreaterOrEqual(0, v)),
      [true, false, true, false, false, false, true, false, false, false, false, false],
    );
  });
});
