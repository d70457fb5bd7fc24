import assert from 'node:assert/strict';
import { decodeJson, phpLooseEqualsNull, phpLooseEqualStrings, phpLooseEqualsWord, phpVarExport, PhpFloat } from '../../src/php-compat/index.js';
import { runOutput } from '../support/output.js';

describe('PHP quirks used by the output', () => {
  it('var_export as PHP 7.4 prints it in csvmap errors', () => {
    assert.equal(phpVarExport(decodeJson('["a",["b"],{"k":1.0}]')), "array (\n  0 => 'a',\n  1 => \n  array (\n    0 => 'b',\n  ),\n  2 => \n  (object) array(\n     'k' => 1.0,\n  ),\n)");
    assert.equal(phpVarExport(decodeJson('{"it\'s":"a\\\\b","n":null,"t":true,"f":0.1}')), "(object) array(\n   'it\\'s' => 'a\\\\b',\n   'n' => NULL,\n   't' => true,\n   'f' => 0.10000000000000001,\n)");
  });

  it('loose comparisons', () => {
    for (const v of [null, false, 0, '', [], new PhpFloat(0)]) assert.equal(phpLooseEqualsNull(v), true, String(v));
    for (const v of ['0', 'a', 1, true, new Map()]) assert.equal(phpLooseEqualsNull(v), false, String(v));
    assert.equal(phpLooseEqualStrings('1', '01'), true);
    assert.equal(phpLooseEqualStrings('1e1', '10'), true);
    assert.equal(phpLooseEqualStrings('a', 'A'), false);
    assert.equal(phpLooseEqualsWord(true, 'table'), true);
    assert.equal(phpLooseEqualsWord(0, 'table'), true);
    assert.equal(phpLooseEqualsWord('user', 'table'), false);
  });
});

describe('empty batches', () => {
  it('the JSON parser skips a batch loosely equal to [null] (json-parser `$data == [null]`), not ["0"]', async () => {
    const { files } = await runOutput([{ batches: ['[0]', '[false]', '[""]', '[[]]', '[null]', '[]'].map((rows) => ({ rows })) }]);
    assert.equal(files.size, 0);
    const kept = await runOutput([{ batches: [{ rows: '["0"]' }] }]);
    assert.equal(kept.files.get('b.a'), '"data"\n"0"\n');
  });
});
