import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { UserError } from '../../../src/common/errors.js';
import { CsvScanner } from '../../../src/store/tables/csv-scanner.js';

/** Parses `chunks` (one text cut anywhere) and returns records with the line each ended on. */
function scan(
  chunks: string[],
  delimiter = ',',
  enclosure = '"',
  maxRecordChars = 1 << 24,
): Array<{ record: string[]; line: number }> {
  const out: Array<{ record: string[]; line: number }> = [];
  const scanner = new CsvScanner(delimiter, enclosure, 'test.csv', maxRecordChars, (record, line) =>
    out.push({ record, line }),
  );
  for (const chunk of chunks) scanner.push(chunk);
  scanner.end();
  return out;
}
const records = (chunks: string[], delimiter = ',', enclosure = '"') =>
  scan(chunks, delimiter, enclosure).map((r) => r.record);

/** `text` cut at the given positions. */
function cut(text: string, at: number[]): string[] {
  const points = [...new Set(at.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  const chunks: string[] = [];
  let from = 0;
  for (const p of points) {
    chunks.push(text.slice(from, p));
    from = p;
  }
  chunks.push(text.slice(from));
  return chunks;
}

const invalid = (pattern: RegExp) => (e: unknown) => {
  assert.ok(e instanceof UserError, `a UserError, not ${String(e)}`);
  assert.match(e.message, pattern);
  return true;
};

describe('CsvScanner', () => {
  it('reads what a CSV writer may write, cut into chunks anywhere, as csv-parse does', () => {
    const value = fc
      .array(fc.constantFrom('a', ';', ',', '\t', '"', "'", '\r', '\n', ' ', 'ž', '🙂', '\\'), { maxLength: 6 })
      .map((chars) => chars.join(''));
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 4 })
          .chain((width) =>
            fc.array(fc.array(value, { minLength: width, maxLength: width }), { minLength: 1, maxLength: 8 }),
          ),
        fc.constantFrom(',', ';', '\t'),
        fc.constantFrom('"', "'"),
        fc.constantFrom('\n', '\r\n', '\r'),
        fc.boolean(),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
        (rows, delimiter, enclosure, eol, trailingEol, bom, cuts, quoteAnyway) => {
          const needsQuotes = (v: string, row: string[]) =>
            v.includes(delimiter) ||
            v.includes(enclosure) ||
            v.includes('\r') ||
            v.includes('\n') ||
            (row.length === 1 && v === '');
          const text =
            (bom ? '\uFEFF' : '') +
            rows
              .map((row) =>
                row
                  .map((v, i) =>
                    needsQuotes(v, row) || quoteAnyway[i]
                      ? enclosure + v.replaceAll(enclosure, enclosure + enclosure) + enclosure
                      : v,
                  )
                  .join(delimiter),
              )
              .join(eol) +
            (trailingEol ? eol : '');
          assert.deepEqual(records(cut(text, cuts), delimiter, enclosure), rows);
          const reference = parse(text, {
            bom: true,
            delimiter,
            quote: enclosure,
            escape: enclosure,
            relax_column_count: true,
            skip_empty_lines: false,
            record_delimiter: eol === '\r' ? '\r' : undefined,
          });
          assert.deepEqual(reference, rows);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('text mode: from the record chosen on, each record leaves as its text (no line break, no BOM), which reads back as its values', () => {
    const value = fc
      .array(fc.constantFrom('a', ',', '"', '\r', '\n', ' ', '🙂', '\\', '.'), { maxLength: 5 })
      .map((chars) => chars.join(''));
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 3 })
          .chain((width) =>
            fc.array(fc.array(value, { minLength: width, maxLength: width }), { minLength: 1, maxLength: 8 }),
          ),
        fc.array(fc.constantFrom('\n', '\r\n', '\r'), { minLength: 8, maxLength: 8 }),
        fc.boolean(),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.nat({ max: 8 }),
        (rows, eols, trailingEol, bom, cuts, switchAfter) => {
          const quote = (v: string, row: string[]) =>
            /[",\r\n]/.test(v) || (row.length === 1 && v === '') ? `"${v.replaceAll('"', '""')}"` : v;
          // line endings mixed within one file: each record's own
          const text =
            (bom ? '\uFEFF' : '') +
            rows
              .map(
                (row, i) =>
                  row.map((v) => quote(v, row)).join(',') + (i < rows.length - 1 || trailingEol ? eols[i] : ''),
              )
              .join('');
          const expected = scan([text]);
          const out: Array<{ record: string[]; line: number }> = [];
          const fromRecord = Math.min(switchAfter, rows.length);
          const scanner = new CsvScanner(',', '"', 'test.csv', 1 << 24, (record, line) => {
            out.push({ record, line });
            if (out.length === fromRecord) scanner.emitRecordText(asText);
          });
          const asText = (recordText: string, fields: number, line: number) => {
            assert.ok(!/^\uFEFF/.test(recordText) || out.length > 0, 'no BOM in a text');
            const record = recordText === '' ? [''] : records([recordText]).flat();
            assert.equal(fields, record.length);
            out.push({ record, line });
          };
          if (fromRecord === 0) scanner.emitRecordText(asText);
          for (const chunk of cut(text, cuts)) scanner.push(chunk);
          scanner.end();
          assert.deepEqual(out, expected);
          assert.deepEqual(
            out.map((r) => r.record),
            rows,
          );
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('names the line a record ends on, counting line breaks inside quoted values', () => {
    assert.deepEqual(scan(['a,b\n1,"x\ny"\r\n', '2', ',z\n\n', '"q"']), [
      { record: ['a', 'b'], line: 1 },
      { record: ['1', 'x\ny'], line: 3 },
      { record: ['2', 'z'], line: 4 },
      { record: [''], line: 5 },
      { record: ['q'], line: 6 },
    ]);
  });

  it('a CR ending one chunk and an LF opening the next are one line break; a BOM only counts at the start', () => {
    assert.deepEqual(records(['\uFEFFa\r', '\nb\r', 'c']), [['a'], ['b'], ['c']]);
    assert.deepEqual(records(['a\n', '\uFEFFb']), [['a'], ['\uFEFFb']]);
    assert.deepEqual(records(['']), []);
    assert.deepEqual(records(['a,']), [['a', '']]);
  });

  it('refuses malformed CSV, naming the line', () => {
    assert.throws(
      () => scan(['a\n"unclosed\n']),
      invalid(/test\.csv: invalid CSV on line 3: a value opened with "\\"" is not closed/),
    );
    assert.throws(
      () => scan(['a\n"x"y\n']),
      invalid(/line 2: a character after a closing "\\"" other than the delimiter or a line break/),
    );
    assert.throws(() => scan(['a\nx"y\n']), invalid(/line 2: a "\\"" inside a value not enclosed/));
    assert.throws(
      () => scan(['a,b\n', 'x'.repeat(6), 'y'.repeat(6)], ',', '"', 10),
      invalid(/line 2: a record longer than 10 characters/),
    );
  });
});
