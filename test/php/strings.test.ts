import assert from 'node:assert/strict';
import { phpCompareStrings, phpStrcmp, phpStrWordCount, phpTrim } from '../../src/php/index.js';

// Expected values are PHP 7.4.33's (GE's runtime).
describe('php: string functions', () => {
  it('trim() with its default characters (not form feed)', () => {
    assert.equal(phpTrim(' \t\n\r\0\x0Bab c \x0B'), 'ab c');
    assert.equal(phpTrim('\fa\f'), '\fa\f');
  });

  it('strcmp and string <=> order bytes, not UTF-16 code units', () => {
    assert.ok(phpStrcmp('a', 'b') < 0);
    assert.ok(phpStrcmp('B', 'a') < 0);
    assert.ok(phpStrcmp('ab', 'a') > 0);
    assert.equal(phpStrcmp('x', 'x'), 0);
    assert.ok(phpStrcmp('\uFF61', '\u{1F600}') < 0);
    assert.ok(phpCompareStrings('\uFF61', '\u{1F600}') < 0);
  });

  it('str_word_count in the C locale', () => {
    assert.deepEqual(['hello big-world', '-a b-', "it's 1 2", 'x1y'].map(phpStrWordCount), [2, 2, 1, 2]);
  });
});
