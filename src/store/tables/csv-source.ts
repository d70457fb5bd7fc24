import { createReadStream } from 'node:fs';
import { pipeline, Transform } from 'node:stream';
import { CsvError, parse, type Options } from 'csv-parse';
import { UserError } from '../../common/errors.js';
import { displayId, displayText } from '../../common/log-text.js';
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
}

/** Checks a table's column list: names usable, none twice, not too many. */
export function checkColumns(columns: readonly string[], where: string): void {
  where = displayText(where);
  if (columns.length === 0) throw new UserError(`${where}: no columns.`);
  if (columns.length > MAX_COLUMNS) throw new UserError(`${where}: ${columns.length} columns, more than the ${MAX_COLUMNS} a table may have.`);
  const seen = new Set<string>();
  columns.forEach((name, i) => {
    const problem = name === TIMESTAMP_COLUMN ? `is reserved for the time a row last changed; rename the column` : nameProblem(name);
    if (problem) throw new UserError(`${where}: column ${i + 1} (${displayId(name)}) ${problem}.`);
    if (seen.has(name)) throw new UserError(`${where}: column ${displayId(name)} appears twice; column names must be unique.`);
    seen.add(name);
  });
}

/** Bytes read from the file at a time (Node's default of 64 KB costs more stream turns per MB). */
const READ_CHUNK_BYTES = 256 * 1024;

function parserOptions(options: CsvOptions, info: boolean): Options {
  return {
    bom: true,
    delimiter: options.delimiter,
    quote: options.enclosure,
    escape: options.enclosure,
    info, // only to name a bad record's line: an object per record costs ~40% of the parse
    relax_column_count: true, // checked by the reader, for an error that names the file
    max_record_size: MAX_RECORD_CHARACTERS,
    skip_empty_lines: false,
  };
}

/**
 * A CSV file read as a stream: its columns, then its records in batches of at most `batchSize`.
 * Only one batch is in memory at a time. Every record must have as many fields as there are
 * columns, and no value may contain NUL (PostgreSQL's text cannot hold it; refused on SQLite too,
 * so that a file loads the same everywhere).
 */
export async function* readCsvBatches(file: string, options: CsvOptions, batchSize: number): AsyncGenerator<{ columns: string[] } | { rows: string[][] }> {
  // pipeline, not pipe: an error of any stage (unreadable file, NUL) ends the parser's iteration
  const parser = pipeline(createReadStream(file, { highWaterMark: READ_CHUNK_BYTES }), refuseNul(file, options.label), parse(parserOptions(options, false)), () => undefined);
  let columns = options.columns ? [...options.columns] : null;
  if (columns) {
    checkColumns(columns, `${options.label} (manifest columns)`);
    yield { columns };
  }
  let batch: string[][] = [];
  let records = 0;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      records++;
      if (!columns) {
        columns = record;
        checkColumns(columns, `${options.label} (header)`);
        yield { columns };
        continue;
      }
      if (record.length !== columns.length) {
        const line = await lineOfRecord(file, options, records);
        throw new UserError(
          `${displayText(options.label)}, line ${line}: ${record.length} fields where the table has ${columns.length} columns; ` +
            `every row needs one value per column.`,
        );
      }
      batch.push(record);
      if (batch.length >= batchSize) {
        yield { rows: batch };
        batch = [];
      }
    }
  } catch (error) {
    if (error instanceof CsvError) throw new UserError(`${displayText(options.label)}: invalid CSV: ${error.message}`);
    throw error;
  } finally {
    parser.destroy();
  }
  if (!columns) throw new UserError(`${displayText(options.label)}: the file is empty; it needs a header row, or the manifest's columns.`);
  if (batch.length > 0) yield { rows: batch };
}

/** The line (1-based) on which record `n` (1-based) of the file ends: parsed again, only for an error. */
async function lineOfRecord(file: string, options: CsvOptions, n: number): Promise<number> {
  const parser = createReadStream(file).pipe(parse({ ...parserOptions(options, true), to: n }));
  let line = 0;
  for await (const { info } of parser as AsyncIterable<{ info: { lines: number } }>) line = info.lines;
  return line;
}

/** Passes the file's bytes on, failing at the first NUL byte with an error naming its line. */
function refuseNul(file: string, label: string): Transform {
  let offset = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const at = chunk.indexOf(0);
      if (at < 0) {
        offset += chunk.length;
        return done(null, chunk);
      }
      lineAt(file, offset + at).then(
        (line) => done(new UserError(`${displayText(label)}, line ${line}: a value contains a NUL character (byte 0), which a table cannot hold; remove it from the file.`)),
        done,
      );
    },
  });
}

/** The line (1-based) of byte `offset` of the file: the line breaks before it, counted. */
async function lineAt(file: string, offset: number): Promise<number> {
  let line = 1;
  if (offset === 0) return line;
  for await (const chunk of createReadStream(file, { end: offset - 1 }) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) line++;
  }
  return line;
}
