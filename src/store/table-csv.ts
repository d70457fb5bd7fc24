import { once } from 'node:events';
import { UserError } from '../common/errors.js';
import { excerptId } from '../common/log-text.js';
import type { TableSource } from './table-source.js';
import { keboolaCsv, type TableDetail, type TableQuery } from './tables/index.js';

export interface ExportResult {
  rows: number;
  columns: string[];
  table: TableDetail;
}

/** Writes to a stream, waiting whenever it asks to (memory stays bounded whatever the table's size). */
async function writeChunk(stream: NodeJS.WritableStream, text: string): Promise<void> {
  if (text !== '' && !stream.write(text)) await once(stream, 'drain');
}

/**
 * Streams the rows of a query as Keboola's CSV to `out`: the header (the columns asked for, else
 * the table's), then the rows batch by batch. A table whose columns changed while it was read is
 * refused, so that the header always names the values below it.
 */
export async function streamCsv(
  source: TableSource,
  tableId: string,
  query: TableQuery,
  out: NodeJS.WritableStream,
): Promise<ExportResult> {
  const table = await source.table(tableId);
  const expected = query.columns && query.columns.length > 0 ? [...query.columns] : table.columns;
  await writeChunk(out, keboolaCsv([expected]));
  let rows = 0;
  const columns = await source.read(tableId, query, async (batch) => {
    rows += batch.length;
    await writeChunk(out, keboolaCsv(batch));
  });
  if (columns.length !== expected.length || columns.some((c, i) => c !== expected[i])) {
    throw new UserError(
      'GEX_FILE_NOT_WRITTEN',
      `Table ${excerptId(tableId)} changed its columns while it was exported; run the export again.`,
    );
  }
  return { rows, columns, table };
}
