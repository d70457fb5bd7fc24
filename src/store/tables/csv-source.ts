import { createReadStream } from 'node:fs';
import { CsvError, parse } from 'csv-parse';
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

/**
 * A CSV file read as a stream: its columns, then its records in batches of at most `batchSize`.
 * Only one batch is in memory at a time. Every record must have as many fields as there are columns.
 */
export async function* readCsvBatches(file: string, options: CsvOptions, batchSize: number): AsyncGenerator<{ columns: string[] } | { rows: string[][] }> {
  const parser = createReadStream(file).pipe(
    parse({
      bom: true,
      delimiter: options.delimiter,
      quote: options.enclosure,
      escape: options.enclosure,
      info: true,
      relax_column_count: true, // checked below, for an error that names the file
      max_record_size: MAX_RECORD_CHARACTERS,
      skip_empty_lines: false,
    }),
  );
  let columns = options.columns ? [...options.columns] : null;
  if (columns) {
    checkColumns(columns, `${options.label} (manifest columns)`);
    yield { columns };
  }
  let batch: string[][] = [];
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (!columns) {
        columns = record;
        checkColumns(columns, `${options.label} (header)`);
        yield { columns };
        continue;
      }
      if (record.length !== columns.length) {
        throw new UserError(
          `${displayText(options.label)}, line ${info.lines}: ${record.length} fields where the table has ${columns.length} columns; ` +
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
