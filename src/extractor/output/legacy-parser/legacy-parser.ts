import { ApplicationError } from '../../../common/errors.js';
import { JsonFloat, type JsonObject, type JsonValue } from '../../../json/index.js';
import { phpLooseEqualsNull } from '../../../php/index.js';
import type { CsvFile } from '../csv-file.js';
import { closedTables, StructState, type BucketParser, type OpenTable, type ProducedTable } from '../record-parser.js';
import type { Spool } from '../spool.js';
import type { TableNameCheck } from '../table-files.js';
import { LegacyAnalyzer } from './legacy-analyzer.js';
import { LegacyReplay } from './legacy-replay.js';
import { LegacyStruct, LegacyStructError } from './legacy-struct.js';

/** `json_parser.structVersion` of the legacy parser: the float 2.0 (`json_encode` prints `2`). */
export const LEGACY_STRUCT_VERSION = new JsonFloat(2);

/**
 * GE's legacy JSON → CSV flattener (keboola-legacy/json-parser; compatLevel 1 or a state
 * structure of version 2), in the same two phases as the new parser: `process()` analyses each
 * batch into the flat structure and queues it on disk, the tables are written at the end.
 */
export class LegacyJsonParser implements BucketParser {
  readonly struct = new LegacyStruct();
  private readonly analyzer: LegacyAnalyzer;

  constructor(
    private readonly spool: Spool,
    private readonly onWarning: (message: string) => void = () => {},
    /** refuses table names that cannot be file names (response keys become table names) */
    private readonly checkTableName?: TableNameCheck,
  ) {
    this.analyzer = new LegacyAnalyzer(this.struct, onWarning);
  }

  /** Seeds the structure from a saved `json_parser.struct` (version 2). */
  seed(struct: JsonValue | undefined): void {
    if (struct !== undefined) this.struct.load(struct);
  }

  /**
   * Analyses and queues a batch. An empty batch (or one loosely equal to `[null]`) is ignored
   * unless the type is already known — then it still creates the table (header only).
   */
  process(rows: JsonValue[], dataType: string, injected: JsonObject = new Map()): boolean {
    const empty = rows.length === 0 || (rows.length === 1 && phpLooseEqualsNull(rows[0]));
    if (empty && !this.struct.hasDefinitions(dataType)) return false;
    this.analyzer.analyze(rows, dataType);
    this.spool.append({ dataType, injected, rows });
    return true;
  }

  settle(): Promise<void> {
    return this.spool.settle();
  }

  structState(): StructState {
    return new StructState(this.struct.toState(), LEGACY_STRUCT_VERSION);
  }

  async results(openTable: OpenTable, onDataError: (message: string) => void): Promise<ProducedTable[]> {
    return closedTables(await this.writeTables(openTable, onDataError));
  }

  /** Writes every table; returns them in the order they were created. */
  async writeTables(openTable: OpenTable, onDataError: (message: string) => void): Promise<Map<string, CsvFile>> {
    const replay = new LegacyReplay(this.struct, openTable, onDataError, this.onWarning, this.checkTableName);
    if (this.spool.batches === 0) return replay.tables;
    try {
      for await (const batch of this.spool.read()) {
        replay.writeBatch(batch);
        for (const table of replay.tables.values()) await table.flush();
      }
    } catch (error) {
      // GE fails the same way: its legacy parser throws while the results are collected
      if (error instanceof LegacyStructError)
        throw new ApplicationError('GEX_TABLE_WRITE_FAILED', `Legacy JSON parser: ${error.message}`);
      throw error;
    }
    return replay.tables;
  }

  dispose(): Promise<void> {
    return this.spool.dispose();
  }
}
