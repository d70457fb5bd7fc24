import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { stringify } from 'csv-stringify/sync';
import { ApplicationError } from '../../common/errors.js';
import { phpStringBytes } from '../../php/index.js';

/** GE's CSV dialect: every field quoted (header and empty cells too), `""` escaping, LF endings. */
const DIALECT = { quoted: true, quoted_empty: true, record_delimiter: 'unix', eof: true } as const;

/**
 * CSV text buffered before it is handed to the file stream: fewer, larger writes. Small enough
 * that the text waiting (a tree of row strings until written) stays cheap for V8's young-generation
 * collections, which copy whatever is alive: at 64 KB they took half as long again (--trace-gc).
 */
const CHUNK_CHARS = 16 * 1024;

/**
 * Bytes the file stream may hold before `flush()`/`drained()` wait for the disk. Node's default
 * (16 KB) is less than one chunk: every chunk made the run wait for its write, idle, between pages.
 */
const STREAM_BUFFER_BYTES = 256 * 1024;

/**
 * One CSV record in GE's dialect (a record without fields is just the line end); write it with
 * phpStringBytes. What csv-stringify writes with DIALECT for string cells, byte for byte, without
 * its per-field option handling and arrays (it allocated more than a whole run's decoding);
 * anything but a string (never passed: cells are PHP string conversions) goes to csv-stringify.
 */
export function csvLine(cells: string[]): string {
  if (cells.length === 0) return '\n';
  let quotes = false;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i];
    if (typeof cell !== 'string') return stringify([cells], DIALECT);
    if (!quotes && cell.includes('"')) quotes = true;
  }
  // one join: the line is a single flat string, not a tree of concatenations the GC copies
  return `"${(quotes ? cells.map((cell) => cell.replaceAll('"', '""')) : cells).join('","')}"\n`;
}

/**
 * One output CSV. Each row becomes CSV text at once (a row kept as an array of strings survives
 * V8's young-generation collections, its text is one string a fraction of the size); the text is
 * handed to the file stream in chunks, and `flush()` waits for the stream to drain so memory stays
 * bounded however many rows pass through.
 */
export class CsvFile {
  private readonly stream: WriteStream;
  /** CSV text of rows not yet handed to the stream */
  private pendingText = '';
  private lastWrite: Promise<void> = Promise.resolve();
  rows = 0;
  /** the header as written (empty: no header row) */
  header: string[] = [];
  /** bytes of the header row, where the data rows start */
  headerBytes = 0;

  /** a write error (e.g. disk full), rethrown by the next call instead of crashing the process */
  private failure: Error | null = null;

  constructor(readonly file: string) {
    // always a new file in gex's own work folder: `wx` never writes through something planted there
    this.stream = createWriteStream(file, { flags: 'wx', highWaterMark: STREAM_BUFFER_BYTES });
    this.stream.on('error', (error) => {
      this.failure ??= error;
    });
  }

  private check(): void {
    if (this.failure)
      throw new ApplicationError('GEX_TABLE_WRITE_FAILED', `Cannot write ${this.file}: ${this.failure.message}`, {
        cause: this.failure,
      });
  }

  /** The header row; an empty header writes nothing (GE: a table without columns has no header). */
  writeHeader(columns: string[]): void {
    this.header = columns;
    if (columns.length === 0) return;
    const line = csvLine(columns);
    this.headerBytes = phpStringBytes(line).length;
    this.pendingText += line;
  }

  writeRow(cells: string[]): void {
    this.pendingText += csvLine(cells);
    this.rows++;
    if (this.pendingText.length >= CHUNK_CHARS) this.writePending();
  }

  /** Hands buffered rows to the stream; waits only if the stream asks for it. */
  async flush(): Promise<void> {
    this.check();
    this.writePending();
    if (this.stream.writableNeedDrain) await once(this.stream, 'drain');
  }

  /** Back-pressure only: waits while the stream holds more than its buffer (rows stay batched). */
  async drained(): Promise<void> {
    this.check();
    if (this.stream.writableNeedDrain) await once(this.stream, 'drain');
  }

  /** Resolves when everything handed to the stream so far is in the file. */
  async written(): Promise<void> {
    await this.flush();
    await this.lastWrite;
  }

  async close(): Promise<void> {
    if (this.stream.writableFinished) return;
    await this.flush();
    this.stream.end();
    await once(this.stream, 'finish');
  }

  destroy(): void {
    this.stream.destroy();
  }

  private writePending(): void {
    if (this.pendingText === '') return;
    // PHP byte strings (e.g. a raw digest in userData) are written as the bytes they hold
    const chunk = phpStringBytes(this.pendingText);
    this.pendingText = '';
    const write = new Promise<void>((resolve, reject) =>
      this.stream.write(chunk, (error) => (error ? reject(error) : resolve())),
    );
    write.catch(() => {}); // the stream reports the error too; awaiting `written()` rethrows it
    this.lastWrite = write;
  }
}
