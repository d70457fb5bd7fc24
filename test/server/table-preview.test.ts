import assert from 'node:assert/strict';
import { fromPlain, stringifyExact } from '../../src/json/index.js';
import { StoreError } from '../../src/store/store-error.js';
import type { TableQuery } from '../../src/store/tables/index.js';
import { JSON_PREVIEW_VALUE_CHARACTERS, previewEncoder } from '../../src/server/storage/preview-body.js';
import { ByteBudget } from '../../src/server/http/byte-budget.js';
import { BatchSizer, preparePreview, type PreviewRequest } from '../../src/server/storage/table-preview.js';

/**
 * The data-preview pipeline without HTTP: batch sizes, the byte-for-byte encoding of both formats
 * across batches, the per-answer limit and the server-wide budget (taken while building, given back
 * as the answer is sent or dropped). test/server/preview-http.test.ts runs it through a server.
 */

const HOSTILE = [
  'plain',
  '',
  'a,b',
  'say "hi"',
  'line\nbreak',
  'cr\r\nlf',
  'tab\there',
  '\u0000nul\u0007bell',
  'ünï©ødé 😀',
  '\ud83d lone',
  '\\back/slash',
  '</script>',
];

/** A table of `rows` rows (values from HOSTILE and `extra`) read in the batches `read` is asked for. */
function fakeTable(columns: string[], rows: string[][]): { tables: PreviewRequest['tables']; batches: number[] } {
  const batches: number[] = [];
  return {
    batches,
    tables: {
      async read(
        _tableId: string,
        query: TableQuery,
        onBatch: (rows: string[][], columns: readonly string[]) => Promise<void>,
        options: { batchRows?: () => number } = {},
      ) {
        const limit = Math.min(query.limit ?? rows.length, rows.length);
        for (let at = 0; at < limit;) {
          const n = Math.max(1, Math.min(options.batchRows?.() ?? 5000, limit - at));
          batches.push(n);
          await onBatch(rows.slice(at, at + n), columns);
          at += n;
        }
        return columns;
      },
    },
  };
}

/** The answers as gex encoded them before: one tree, one exact JSON text; one CSV string. */
function wholeCsv(columns: string[], rows: string[][]): string {
  const quoted = (v: string) => `"${v.replaceAll('"', '""')}"`;
  return [columns.map(quoted).join(','), ...rows.map((r) => r.map(quoted).join(','))].join('\n') + '\n';
}
function wholeJson(columns: string[], rows: string[][]): string {
  return stringifyExact(
    fromPlain({
      columns,
      rows: rows.map((row) =>
        row.map((value, i) => {
          const isTruncated = value.length > JSON_PREVIEW_VALUE_CHARACTERS;
          return {
            columnName: columns[i],
            value: isTruncated ? value.slice(0, JSON_PREVIEW_VALUE_CHARACTERS) : value,
            isTruncated,
          };
        }),
      ),
    }),
  );
}

function assertSameBytes(actual: Buffer, expected: Buffer, label: string): void {
  if (actual.equals(expected)) return;
  let at = 0;
  while (at < Math.min(actual.length, expected.length) && actual[at] === expected[at]) at++;
  assert.fail(
    `${label}: ${actual.length} bytes, expected ${expected.length}; first difference at byte ${at}: ${JSON.stringify(actual.subarray(at, at + 40).toString())} vs ${JSON.stringify(expected.subarray(at, at + 40).toString())}`,
  );
}

async function bodyOf(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function request(tables: PreviewRequest['tables'], overrides: Partial<PreviewRequest> = {}): PreviewRequest {
  return {
    tables,
    tableId: 'in.c-b.t',
    query: { limit: 1000 },
    format: 'rfc',
    maxBytes: 64 * 1024 * 1024,
    budget: new ByteBudget(128 * 1024 * 1024),
    signal: new AbortController().signal,
    ...overrides,
  };
}

describe('server: data preview pipeline', () => {
  describe('BatchSizer', () => {
    it('starts with one row, grows at most 4× a batch, and keeps batches within 5,000 cells and ~1 MiB of values', () => {
      const sizer = new BatchSizer();
      assert.equal(sizer.next(), 1);
      const narrow = (n: number) => Array.from({ length: n }, () => ['1', '2']);
      sizer.observe(narrow(1));
      assert.equal(sizer.next(), 4);
      sizer.observe(narrow(4));
      assert.equal(sizer.next(), 16);
      for (let i = 0; i < 10; i++) sizer.observe(narrow(sizer.next()));
      assert.equal(sizer.next(), 2500, 'two columns: 2,500 rows make 5,000 cells');

      const wide = new BatchSizer();
      for (let i = 0; i < 10; i++)
        wide.observe(Array.from({ length: wide.next() }, () => Array.from({ length: 1000 }, () => 'x')));
      assert.equal(wide.next(), 5, '1,000 columns: 5 rows a batch');

      const long = new BatchSizer();
      long.observe([['x'.repeat(400 * 1024)]]);
      assert.equal(long.next(), 2, 'rows of 400 KiB: two fit in ~1 MiB');
      long.observe([['x'.repeat(8 * 1024 * 1024)]]);
      assert.equal(long.next(), 1, 'a row larger than a batch is read alone');
    });
  });

  describe('preparePreview', () => {
    const columns = ['id', 'text', 'with "quote"', 'ünï'];
    const rows = Array.from({ length: 700 }, (_, r) => [
      String(r),
      HOSTILE[r % HOSTILE.length],
      HOSTILE[(r * 7) % HOSTILE.length],
      r % 97 === 0 ? 'é'.repeat(JSON_PREVIEW_VALUE_CHARACTERS + r) : `v${r}`,
    ]);
    // exactly at the cut: carried whole
    rows[5][1] = 'y'.repeat(JSON_PREVIEW_VALUE_CHARACTERS);

    for (const limit of [0, 1, 5, 100, 700]) {
      it(`encodes ${limit} rows byte for byte as the whole-answer encoders did (CSV and JSON), over many batches`, async () => {
        for (const format of ['rfc', 'json'] as const) {
          const { tables, batches } = fakeTable(columns, rows);
          const budget = new ByteBudget(64 * 1024 * 1024);
          const prepared = await preparePreview(request(tables, { format, query: { limit }, budget }));
          const body = await bodyOf(prepared.body);
          const expected =
            format === 'json' ? wholeJson(columns, rows.slice(0, limit)) : wholeCsv(columns, rows.slice(0, limit));
          // as bytes: both sides write a lone surrogate as UTF-8 does (U+FFFD in CSV; JSON escapes it)
          assertSameBytes(body, Buffer.from(expected), format);
          assert.equal(prepared.length, Buffer.byteLength(expected), 'Content-Length');
          assert.equal(prepared.contentType, format === 'json' ? 'application/json' : 'text/csv; charset=utf-8');
          if (limit >= 100) assert.ok(batches.length >= 5, `read in batches: ${batches.join(',')}`);
          assert.equal(budget.inUse, 0, 'every byte given back once sent');
        }
      });
    }

    it('refuses an answer one byte over the limit (both formats) and takes nothing from the budget', async () => {
      for (const format of ['rfc', 'json'] as const) {
        const { tables } = fakeTable(columns, rows);
        const exact = (await preparePreview(request(tables, { format }))).length;
        const budget = new ByteBudget(64 * 1024 * 1024);
        const fits = await preparePreview(request(tables, { format, maxBytes: exact, budget }));
        assert.equal(fits.length, exact);
        fits.body.destroy();
        assert.equal(budget.inUse, 0);

        const { tables: counted, batches } = fakeTable(columns, rows);
        await assert.rejects(
          preparePreview(request(counted, { format, maxBytes: exact - 1, budget })),
          (error: unknown) => {
            assert.ok(error instanceof StoreError);
            assert.equal(error.status, 400);
            assert.equal(error.code, 'storage.tables.previewTooLarge');
            assert.match(
              error.message,
              new RegExp(
                `in\\.c-b\\.t would be larger than ${exact - 1} bytes \\(format ${format}, 1000 rows asked\\)\\. Ask for fewer rows \\(limit\\) or fewer columns`,
              ),
            );
            return true;
          },
        );
        assert.equal(budget.inUse, 0, 'a refused preview gives back what it took');

        // the read stops at the limit: a small limit reads a few batches, not the whole table
        await assert.rejects(
          preparePreview(request(counted, { format, maxBytes: 1000, budget })),
          /previewTooLarge|larger than 1000 bytes/,
        );
        const lastRead = batches.slice(batches.lastIndexOf(1));
        assert.ok(lastRead.reduce((a, b) => a + b, 0) < 100, `rows read before refusing: ${lastRead.join(',')}`);
      }
    });

    it('holds at most the budget across answers: 503 past it; bytes come back as an answer is read or dropped', async () => {
      const { tables } = fakeTable(columns, rows);
      const size = (await preparePreview(request(tables))).length;
      const budget = new ByteBudget(Math.floor(size * 1.5));
      const first = await preparePreview(request(tables, { budget }));
      assert.equal(budget.inUse, size, 'a built answer holds its bytes until sent');

      await assert.rejects(preparePreview(request(tables, { budget })), (error: unknown) => {
        assert.ok(error instanceof StoreError);
        assert.equal(error.status, 503);
        assert.equal(error.code, 'storage.tables.previewCapacity');
        assert.match(
          error.message,
          /already holding \d+ bytes of data previews for other requests\. Retry in a few seconds/,
        );
        return true;
      });
      assert.equal(budget.inUse, size, 'the refused one gave back what it had taken');

      // reading the first answer gives its bytes back chunk by chunk
      const reader = first.body[Symbol.asyncIterator]();
      await reader.next();
      assert.ok(budget.inUse < size, 'the first chunk sent is given back');
      await reader.return!();
      assert.equal(budget.inUse, 0, 'a dropped answer gives back the rest');

      const second = await preparePreview(request(tables, { budget }));
      assert.equal((await bodyOf(second.body)).length, size);
      assert.equal(budget.inUse, 0);
    });

    it('stops reading when the client has gone', async () => {
      const { tables, batches } = fakeTable(columns, rows);
      const gone = new AbortController();
      const budget = new ByteBudget(1024 * 1024 * 1024);
      const tracking: PreviewRequest['tables'] = {
        read: (id, query, onBatch, options) =>
          tables.read(
            id,
            query,
            async (batch, cols) => {
              if (batches.length === 3) gone.abort();
              await onBatch(batch, cols);
            },
            options,
          ),
      };
      await assert.rejects(preparePreview(request(tracking, { budget, signal: gone.signal })), /closed the connection/);
      assert.equal(batches.length, 3, 'the batch read when the client left is not encoded, and no other is read');
      assert.equal(budget.inUse, 0);
    });
  });

  it('encoders: an empty table is its header (CSV) or empty rows (JSON)', () => {
    const csv = previewEncoder('rfc');
    assert.equal(csv.start(['a', 'b"c']) + csv.end(), '"a","b""c"\n');
    const json = previewEncoder('json');
    assert.equal(json.start(['a']) + json.end(), '{"columns":["a"],"rows":[]}');
  });
});
