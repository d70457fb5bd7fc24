import type { JsonObject, JsonValue } from '../../json/index.js';
import type { CsvFile } from './csv-file.js';
import type { PageSource } from './spool.js';

/** What the job loop hands records to (GE's `ParserInterface::process`). */
export interface RecordParser {
  /**
   * Takes one page of records of `dataType` with the injected columns (userData, parent_*);
   * `source`, when given, is the response the records were found in (a parser may keep that
   * instead of the records, see Spool).
   */
  process(rows: JsonValue[], dataType: string, injected?: JsonObject, source?: PageSource): unknown;
  /** Back-pressure: resolves when what `process()` queued or wrote has reached the disk. */
  settle(): Promise<void>;
}

/**
 * `json_parser.struct` and `json_parser.structVersion` as a parser leaves them for the state
 * (version 3 for the JSON parser, the float 2.0 for the legacy parser).
 */
export class StructState {
  constructor(
    readonly struct: JsonValue,
    readonly version: JsonValue,
  ) {}
}

/** A finished table of a parser: a closed CSV and the primary key its manifest declares. */
export interface ProducedTable {
  name: string;
  csv: CsvFile;
  primaryKey: JsonValue[];
}

/** Closes tables written without a primary key and returns them as results, in their order. */
export async function closedTables(tables: Map<string, CsvFile>): Promise<ProducedTable[]> {
  const produced: ProducedTable[] = [];
  for (const [name, csv] of tables) {
    await csv.close();
    produced.push({ name, csv, primaryKey: [] });
  }
  return produced;
}

/** Opens a CSV file for a table a parser writes at the end of the run. */
export type OpenTable = (name: string) => CsvFile;

/** The parser of one output bucket: receives the records and produces the bucket's tables. */
export interface BucketParser extends RecordParser {
  /** What GE merges into the state after a config ran; undefined when GE keeps the state as is (mappings). */
  structState(): StructState | undefined;
  /** Writes (or completes) every table and returns them, closed, in GE's result order. */
  results(openTable: OpenTable, onDataError: (message: string) => void): Promise<ProducedTable[]>;
  /** Removes temporary files. */
  dispose(): Promise<void>;
}
