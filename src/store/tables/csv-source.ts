import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { UserError } from '../../common/errors.js';
import { displayText, excerptId } from '../../common/log-text.js';
import { CsvScanner } from './csv-scanner.js';
import { TIMESTAMP_COLUMN } from './physical-names.js';
import { nameProblem } from './table-id.js';

/** Most columns a table may have (PostgreSQL allows 1600 per table, SQLite 2000 by default). */
export const MAX_COLUMNS = 1000;
/** Longest CSV record in characters (Keboola's cell limit is 16 MB). */
export const MAX_RECORD_CHARACTERS = 16 * 1024 * 1024;

export interface CsvOptions {
  /** the file as errors name it */
  readonly label: string;
  readonly delimiter: string;
  readonly enclosure: string;
  /** the columns of a headless file; null: the first record is the header */
  readonly columns: readonly string[] | null;
  /**
   * 'values' (default): each record as its values; 'text': each record as its CSV text, checked
   * (field count, NUL, valid CSV) but not split into values — for a bulk path reading the same
   * dialect. The header is parsed either way.
   */
  readonly records?: 'values' | 'text';
}

/**
 * Where a CSV comes from: a file's path, or a function that opens its bytes from the start (e.g.
 * a stored file's chunks, read as they are consumed) — opened again only to find the line of an error.
 */
export type CsvSource = string | (() => Readable);

const openSource = (source: CsvSource): Readable => (typeof source === 'string' ? createReadStream(source) : source());

/** Checks a table's column list: names usable, none twice, not too many. */
export function checkColumns(columns: readonly string[], where: string): void {
  where = displayText(where);
  if (columns.length === 0) throw new UserError('GEX_TABLE_LOAD_REFUSED', `${where}: no columns.`);
  if (columns.length > MAX_COLUMNS)
    throw new UserError(
      'GEX_TABLE_LOAD_REFUSED',
      `${where}: ${columns.length} columns, more than the ${MAX_COLUMNS} a table may have.`,
    );
  const seen = new Set<string>();
  columns.forEach((name, i) => {
    const problem =
      name === TIMESTAMP_COLUMN ? `is reserved for the time a row last changed; rename the column` : nameProblem(name);
    if (problem)
      throw new UserError('GEX_TABLE_LOAD_REFUSED', `${where}: column ${i + 1} (${excerptId(name)}) ${problem}.`);
    if (seen.has(name))
      throw new UserError(
        'GEX_TABLE_LOAD_REFUSED',
        `${where}: column ${excerptId(name)} appears twice; column names must be unique.`,
      );
    seen.add(name);
  });
}

/**
 * A CSV file read as a stream: its columns, then its records in batches of about `batchSize`
 * (one read chunk's records more at most). Only one batch is in memory at a time. Every record
 * must have as many fields as there are columns, and no value may contain NUL (PostgreSQL's text
 * cannot hold it; refused on SQLite too, so that a file loads the same everywhere).
 */
export async function* readCsvBatches(
  file: CsvSource,
  options: CsvOptions,
  batchSize: number,
): AsyncGenerator<{ columns: string[] } | { rows: string[][] } | { texts: string[] }> {
  const label = displayText(options.label);
  let columns = options.columns ? [...options.columns] : null;
  if (columns) {
    checkColumns(columns, `${options.label} (manifest columns)`);
    yield { columns };
  }
  const headerFromFile = columns === null;
  let batch: string[][] = [];
  let texts: string[] = [];
  const wrongCount = (fields: number, line: number) =>
    new UserError(
      'GEX_TABLE_LOAD_REFUSED',
      `${label}, line ${line}: ${fields} fields where the table has ${columns!.length} columns; every row needs one value per column.`,
    );
  const asText = (text: string, fields: number, line: number) => {
    if (fields !== columns!.length) throw wrongCount(fields, line);
    texts.push(text);
  };
  const scanner = new CsvScanner(
    options.delimiter,
    options.enclosure,
    options.label,
    MAX_RECORD_CHARACTERS,
    (record, line) => {
      if (columns === null) {
        checkColumns(record, `${options.label} (header)`);
        columns = record;
        if (options.records === 'text') scanner.emitRecordText(asText);
      } else if (record.length !== columns.length) {
        throw wrongCount(record.length, line);
      } else batch.push(record);
    },
  );
  if (columns !== null && options.records === 'text') scanner.emitRecordText(asText);
  const decoder = new TextDecoder('utf-8');
  let offset = 0;
  let headerYielded = !headerFromFile;
  const stream = openSource(file);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const nul = chunk.indexOf(0);
      if (nul >= 0) {
        throw new UserError(
          'GEX_TABLE_LOAD_REFUSED',
          `${label}, line ${await lineAt(file, offset + nul)}: a value contains a NUL character (byte 0), which a table cannot hold; remove it from the file.`,
        );
      }
      offset += chunk.length;
      scanner.push(decoder.decode(chunk, { stream: true }));
      if (!headerYielded && columns !== null) {
        headerYielded = true;
        yield { columns };
      }
      if (batch.length >= batchSize) {
        const full = batch;
        batch = [];
        yield { rows: full };
      }
      if (texts.length >= batchSize) {
        const full = texts;
        texts = [];
        yield { texts: full };
      }
    }
    scanner.push(decoder.decode());
    scanner.end();
  } finally {
    stream.destroy();
  }
  if (columns === null)
    throw new UserError(
      'GEX_TABLE_LOAD_REFUSED',
      `${label}: the file is empty; it needs a header row, or the manifest's columns.`,
    );
  if (!headerYielded) yield { columns };
  if (batch.length > 0) yield { rows: batch };
  if (texts.length > 0) yield { texts };
}

/** The line (1-based) of byte `offset` of the file: the line breaks before it, counted. */
async function lineAt(file: CsvSource, offset: number): Promise<number> {
  let line = 1;
  let read = 0;
  if (offset === 0) return line;
  const stream = typeof file === 'string' ? createReadStream(file, { end: offset - 1 }) : file();
  try {
    for await (const piece of stream as AsyncIterable<Buffer>) {
      const chunk = read + piece.length > offset ? piece.subarray(0, offset - read) : piece;
      read += chunk.length;
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) line++;
      if (read >= offset) break;
    }
  } finally {
    stream.destroy();
  }
  return line;
}

/** The header row of a CSV file with one (e.g. to compare it with an output mapping's columns); [] for an empty file. */
export async function readCsvHeader(
  file: CsvSource,
  options: Pick<CsvOptions, 'label' | 'delimiter' | 'enclosure'>,
): Promise<string[]> {
  const batches = readCsvBatches(file, { ...options, columns: null }, 1);
  try {
    const first = await batches.next();
    return first.done ? [] : ((first.value as { columns?: string[] }).columns ?? []);
  } finally {
    await batches.return(undefined);
  }
}
