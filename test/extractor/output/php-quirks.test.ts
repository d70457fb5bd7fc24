import assert from 'node:assert/strict';
import { decodeJson, JsonFloat } from '../../../src/json/index.js';
import { phpLooseEqualsNull, phpLooseEqualStrings, phpLooseEqualsWord, phpVarExport } from '../../../src/php/index.js';
import { runOutput } from '../../support/output.js';

describe('PHP quirks used by the output', () => {
  it('var_export as PHP 7.4 prints it in csvmap errors', () => {
    assert.equal(
      phpVarExport(decodeJson('["a",["b"],{"k":1.0}]')),
      "array (\n  0 => 'a',\n  1 => \n  array (\n    0 => 'b',\n  ),\n  2 => \n  (object) array(\n     'k' => 1.0,\n  ),\n)",
    );
    assert.equal(
      phpVarExport(decodeJson('{"it\'s":"a\\\\b","n":null,"t":true,"f":0.1}')),
      "(object) array(\n   'it\\'s' => 'a\\\\b',\n   'n' => NULL,\n   't' => true,\n   'f' => 0.10000000000000001,\n)",
    );
  });

  it('loose comparisons', () => {
    for (const v of [null, false, 0, '', [], new JsonFloat(0)]) assert.equal(phpLooseEqualsNull(v), true, String(v));
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
  it('the JSON parser skips only a batch that is exactly [null]; [false], [0], [0.0], [""], [[]] make tables as in GE', async () => {
    const batches = { n: '[null]', e: '[]', f: '[false]', z: '[0]', g: '[0.0]', s: '[""]', a: '[[]]', o: '["0"]' };
    const { files: all, state } = await runOutput([
      { batches: Object.entries(batches).map(([type, rows]) => ({ type, rows })) },
    ]);
    const files = new Map([...all].filter(([name]) => !name.endsWith('.manifest')));
    // bytes GE 7.4 wrote for one job per response
    assert.deepEqual(Object.fromEntries(files), {
      'b.f': '"data"\n""\n',
      'b.z': '"data"\n"0"\n',
      'b.g': '"data"\n"0"\n',
      'b.s': '"data"\n""\n',
      'b.a': '"data"\n"[]"\n',
      'b.o': '"data"\n"0"\n',
    });
    const struct = state?.struct as Map<string, unknown>;
    assert.deepEqual([...(struct.get('data') as Map<string, unknown>).keys()], ['_f', '_z', '_g', '_s', '_a', '_o']);
  });

  it('the legacy parser still skips every single PHP-empty value, as GE does', async () => {
    const batches = ['[null]', '[false]', '[0]', '[""]', '[[]]', '[0.0]'].map((rows, i) => ({ type: `t${i}`, rows }));
    assert.equal((await runOutput([{ compatLevel: 1, batches }])).files.size, 0);
  });
});
