import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { excerptId } from '../../common/log-text.js';
import { describeBytes } from '../../common/text.js';
import { StoreError } from '../../store/store-error.js';
import type { ProjectTables, TableQuery } from '../../store/tables/index.js';
import type { ByteBudget } from '../http/byte-budget.js';
import { previewEncoder } from './preview-body.js';
import type { PreviewFormat } from './table-params.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/**
 * A table's data preview (docs/storage-api.md#tables) read and encoded in small batches, each
 * followed by a turn of the event loop, so that one wide preview never stalls other clients; held
 * as encoded bytes only (no tree of values, no one big string), bounded per answer and across all
 * answers in flight, then streamed with backpressure.
 */

/** Largest data-preview answer by default: room for 1000 rows of ~32 KiB of CSV each. */
export const DEFAULT_PREVIEW_MAX_BYTES = 32 * 1024 * 1024;
/** Bytes of preview answers all requests together may hold by default (built or still being sent). */
export const DEFAULT_PREVIEW_TOTAL_BYTES = 128 * 1024 * 1024;

export interface PreviewLimits {
  /** largest answer in bytes; a larger one is refused with 400 `storage.tables.previewTooLarge` */
  maxBytes?: number;
  /** bytes of answers held at once by all previews; past it a preview gets 503 (retry later) */
  totalBytes?: number;
}

/** Cells read, converted and encoded between two turns of the event loop (a few milliseconds of work; 1,000 columns: 5 rows). */
const BATCH_CELLS = 5_000;
/** Characters of values a batch aims at: rows of long values are read a few at a time. */
const BATCH_CHARACTERS = 1024 * 1024;
/** A batch holds at most this many times the rows of the one before (the first holds one row). */
const BATCH_GROWTH = 4;

/**
 * Rows per batch: the first batch is one row (its values may be megabytes), each next one at most
 * BATCH_GROWTH times larger, within BATCH_CELLS cells and about BATCH_CHARACTERS of values as the
 * rows read so far suggest.
 */
export class BatchSizer {
  private rows = 1;

  next(): number {
    return this.rows;
  }

  observe(rows: readonly string[][]): void {
    if (rows.length === 0) return;
    let characters = 0;
    for (const row of rows) for (const value of row) characters += value.length;
    const columns = Math.max(1, rows[0].length);
    const byCells = Math.floor(BATCH_CELLS / columns);
    const byCharacters = Math.floor(BATCH_CHARACTERS / Math.max(1, characters / rows.length));
    this.rows = Math.max(1, Math.min(rows.length * BATCH_GROWTH, byCells, byCharacters));
  }
}

/** The answer's encoded chunks, sent in order; each chunk's bytes go back to the budget once it is passed on. */
class PreviewStream extends Readable {
  private next = 0;

  constructor(
    private readonly chunks: Array<Buffer | undefined>,
    private readonly budget: ByteBudget,
  ) {
    super();
  }

  override _read(): void {
    for (;;) {
      if (this.next === this.chunks.length) {
        this.push(null);
        return;
      }
      const chunk = this.chunks[this.next]!;
      this.chunks[this.next++] = undefined;
      this.budget.release(chunk.length);
      if (!this.push(chunk)) return;
    }
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    for (let i = this.next; i < this.chunks.length; i++) this.budget.release(this.chunks[i]!.length);
    this.chunks.length = 0;
    callback(error);
  }
}

export interface PreparedPreview {
  contentType: string;
  /** bytes of the whole answer (Content-Length) */
  length: number;
  body: Readable;
}

export interface PreviewRequest {
  tables: Pick<ProjectTables, 'read'>;
  tableId: string;
  query: TableQuery;
  format: PreviewFormat;
  maxBytes: number;
  budget: ByteBudget;
  /** aborted when the client has gone: reading stops at the next batch */
  signal: AbortSignal;
}

/**
 * Reads and encodes a preview; refuses it, before any byte is sent, when the answer would be larger
 * than `maxBytes` (400) or the server already holds `budget` bytes of previews (503).
 */
export async function preparePreview(request: PreviewRequest): Promise<PreparedPreview> {
  const { tables, tableId, query, format, maxBytes, budget, signal } = request;
  const encoder = previewEncoder(format);
  const chunks: Buffer[] = [];
  let length = 0;
  let started = false;
  const add = (text: string): void => {
    if (text === '') return;
    const chunk = Buffer.from(text);
    if (length + chunk.length > maxBytes) {
      throw StoreError.keboola(
        KEBOOLA_ERRORS.previewTooLarge,
        `The data preview of table ${excerptId(tableId)} would be larger than ${describeBytes(maxBytes)} (format ${format}, ${query.limit ?? 100} rows asked). ` +
          'Ask for fewer rows (limit) or fewer columns (columns)' +
          (format === 'json' ? ', or use format=rfc (CSV is several times smaller for wide tables).' : '.'),
      );
    }
    if (!budget.tryTake(chunk.length)) {
      throw StoreError.keboola(
        KEBOOLA_ERRORS.previewCapacity,
        `The server is already holding ${describeBytes(budget.total)} of data previews for other requests. Retry in a few seconds, or ask for a smaller preview.`,
        undefined,
        'GEX_SERVER_BUSY',
      );
    }
    length += chunk.length;
    chunks.push(chunk);
  };
  try {
    const sizer = new BatchSizer();
    const columns = await tables.read(
      tableId,
      query,
      async (rows, columns) => {
        if (signal.aborted)
          throw StoreError.keboola(
            KEBOOLA_ERRORS.requestAborted,
            'The client closed the connection before the preview was ready.',
          );
        if (!started) add(encoder.start(columns));
        started = true;
        add(encoder.rows(rows));
        sizer.observe(rows);
        // other requests are served between batches (better-sqlite3 and the encoding are synchronous)
        await nextTurn();
      },
      { batchRows: () => sizer.next() },
    );
    if (!started) add(encoder.start(columns));
    add(encoder.end());
  } catch (error) {
    budget.release(length);
    throw error;
  }
  return { contentType: encoder.contentType, length, body: new PreviewStream(chunks, budget) };
}
