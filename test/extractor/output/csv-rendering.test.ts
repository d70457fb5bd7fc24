import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { CsvFile, csvLine } from '../../../src/extractor/output/csv-file.js';
import { phpStringFromBytes } from '../../../src/php/index.js';
import { table } from '../../support/parser.js';

/** Cells exactly as GE's PHP writes them (docs/ge-behaviour.md#csv-dialect). */
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

describe('CSV bytes', () => {
  it('writes PHP byte strings (e.g. a raw digest from userData) as the bytes they hold', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-csv-bytes-'));
    try {
      const csv = new CsvFile(path.join(dir, 't.csv'));
      const raw = phpStringFromBytes(Buffer.from([0x90, 0x01, 0xc3]));
      csv.writeHeader(['h', raw]);
      csv.writeRow(['é', raw]);
      await csv.close();
      const header = Buffer.from([0x22, 0x68, 0x22, 0x2c, 0x22, 0x90, 0x01, 0xc3, 0x22, 0x0a]);
      assert.equal(csv.headerBytes, header.length);
      assert.deepEqual(
        await readFile(path.join(dir, 't.csv')),
        Buffer.concat([header, Buffer.from('"é","'), Buffer.from([0x90, 0x01, 0xc3]), Buffer.from('"\n')]),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('csvLine', () => {
  const dialect = { quoted: true, quoted_empty: true, record_delimiter: 'unix', eof: true } as const;
  const alphabet = [
    '',
    'a',
    '"',
    '""',
    ',',
    '\n',
    '\r',
    '\t',
    ' ',
    '\\',
    "'",
    '=',
    '-',
    'é',
    '😀',
    '\ud800',
    '\udc90',
    '\u2028',
  ];

  it("writes what csv-stringify writes in GE's dialect, byte for byte", () => {
    // a fixed linear congruential sequence: the same hostile cells in every run
    let seed = 24;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const records: string[][] = [[], [''], ['', ''], ['"'], ['a"b"c']];
    for (let r = 0; r < 2000; r++) {
      const cells: string[] = [];
      for (let c = next(6); c > 0; c--) {
        let cell = '';
        for (let k = next(5); k > 0; k--) cell += alphabet[next(alphabet.length)];
        cells.push(cell);
      }
      records.push(cells);
    }
    for (const cells of records) assert.equal(csvLine(cells), stringify([cells], dialect), JSON.stringify(cells));
  });

  it('hands anything but a string to csv-stringify', () => {
    const cells = ['a', 1, true, undefined] as unknown as string[];
    assert.equal(csvLine(cells), stringify([cells], dialect));
    assert.equal(csvLine(cells), '"a","1","1",""\n');
  });
});
