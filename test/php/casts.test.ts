import assert from 'node:assert/strict';
import { decodeJson, JsonFloat } from '../../src/json/index.js';
import {
  isNumericString,
  phpFilterValidateInt,
  phpGettype,
  phpIntCast,
  phpIsNumeric,
  phpLeadingNumber,
} from '../../src/php/index.js';

// Expected values are PHP 7.4.33's (GE's runtime).
describe('php: casts and tests of values', () => {
  it('is_numeric of strings: leading whitespace allowed, trailing not (PHP 7.4)', () => {
    for (const s of ['5', ' 5', '\n1', '1e3', '.5', '5.', '+1']) assert.equal(isNumericString(s), true, s);
    for (const s of ['5 ', '-', '0x1A', '', ' ', '1e']) assert.equal(isNumericString(s), false, s);
  });

  it('is_numeric of any value: numbers and numeric strings', () => {
    assert.equal(phpIsNumeric(5), true);
    assert.equal(phpIsNumeric(9007199254740993n), true);
    assert.equal(phpIsNumeric(new JsonFloat(1.5)), true);
    assert.equal(phpIsNumeric(' 7'), true);
    assert.equal(phpIsNumeric('7 '), false);
    assert.equal(phpIsNumeric(true), false);
    assert.equal(phpIsNumeric(null), false);
    assert.equal(phpIsNumeric(decodeJson('[1]')), false);
  });

  it('filter_var FILTER_VALIDATE_INT', () => {
    assert.equal(phpFilterValidateInt('5'), 5);
    assert.equal(phpFilterValidateInt(' 5 '), 5);
    assert.equal(phpFilterValidateInt('+5'), 5);
    assert.equal(phpFilterValidateInt(true), 1);
    assert.equal(phpFilterValidateInt(5), 5);
    assert.equal(phpFilterValidateInt(new JsonFloat(5)), 5);
    for (const v of ['05', '1.0', 'abc', false, new JsonFloat(5.5), null])
      assert.equal(phpFilterValidateInt(v), false, String(v));
  });

  it('the leading number of a string and the (int) cast', () => {
    assert.equal(phpLeadingNumber(' 2abc'), 2);
    assert.equal(phpLeadingNumber('1.5e1x'), 15);
    assert.equal(phpLeadingNumber('abc'), 0);
    assert.equal(phpIntCast(' 12.9 apples'), 12);
    assert.equal(phpIntCast('1e999'), 0);
  });

  it('gettype of configuration values (objects are PHP arrays)', () => {
    assert.deepEqual(
      [1, new JsonFloat(1), 'a', true, null, [], new Map()].map((v) => phpGettype(v)),
      ['integer', 'double', 'string', 'boolean', 'NULL', 'array', 'array'],
    );
  });
});
