import assert from 'node:assert/strict';
import { table } from '../support/parser.js';

/** Cells exactly as GE's PHP writes them (ge-output.md §2). */
describe('CSV rendering', () => {
  const cell = async (json: string) => (await table(`[{"v":${json}}]`))!.split('\n')[1];

  it('renders floats with 14 significant digits, PHP style', async () => {
    assert.equal(await cell('1.0'), '"1"');
    assert.equal(await cell('0.1'), '"0.1"');
    assert.equal(await cell('1e20'), '"1.0E+20"');
    assert.equal(await cell('1.5e-7'), '"1.5E-7"');
    assert.equal(await cell('3.14159265358979323'), '"3.1415926535898"');
    assert.equal(await cell('-0.0'), '"-0"');
    assert.equal(await cell('123456789012345678901'), '"1.2345678901235E+20"');
  });

  it('keeps int64 integers exact', async () => {
    assert.equal(await cell('9007199254740993'), '"9007199254740993"');
    assert.equal(await cell('-9223372036854775808'), '"-9223372036854775808"');
    assert.equal(await cell('-0'), '"0"');
  });

  it('renders booleans as 1 and empty, null as empty', async () => {
    assert.equal(await cell('true'), '"1"');
    assert.equal(await cell('false'), '""');
    assert.equal(await cell('null'), '""');
  });

  it('keeps unicode, doubles quotes and writes newlines raw inside quotes', async () => {
    assert.equal(await table('[{"v":"x\\"y\\nz"}]'), '"v"\n"x""y\nz"\n');
    assert.equal(await cell('"Stanisław 😀"'), '"Stanisław 😀"');
    assert.equal(await cell('"a,b\\r\\tc\\\\"'), '"a,b\r\tc\\"');
    assert.equal(await cell('"007"'), '"007"');
  });
});
