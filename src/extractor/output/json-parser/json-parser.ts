import { isJsonObject, phpLooseEqualsNull, type JsonObject, type JsonValue } from '../../../php-compat/index.js';
import type { CsvFile } from '../csv-file.js';
import { StructState, type BucketParser, type OpenTable, type ProducedTable } from '../record-parser.js';
import type { Spool } from '../spool.js';
import { Structure } from './structure.js';
import { TableReplay } from './table-replay.js';

export const STRUCT_VERSION = 3;

/**
 * Generic Extractor's JSON → CSV flattener (keboola/json-parser 3), in two phases as GE runs it:
 * `process()` analyses each batch at once (so every header covers the whole run) and queues it on
 * disk; `writeTables()` replays the queue into CSV files at the end.
 */
export class JsonParser implements BucketParser {
  readonly structure = new Structure();
  private readonly aliases = new Map<string, string>();
  private processed = 0;

  constructor(private readonly spool: Spool) {}

  /** Seeds names and order from a saved `json_parser.struct` (version 3). */
  seed(struct: JsonValue | undefined): void {
    if (!isJsonObject(struct)) return;
    this.structure.load(struct.get('data') ?? null);
    const aliases = struct.get('parent_aliases');
    if (isJsonObject(aliases)) for (const [k, v] of aliases) if (typeof v === 'string') this.aliases.set(k, v);
  }

  /**
   * Analyses and queues records of `dataType`. An empty batch is ignored, and so is one that equals
   * `[null]` in PHP's loose sense (`[null]`, `[false]`, `[0]`, `[""]`, `[[]]`): json-parser's
   * `$data == [null]`.
   */
  process(rows: JsonValue[], dataType: string, injected: JsonObject = new Map()): boolean {
    if (rows.length === 0 || (rows.length === 1 && phpLooseEqualsNull(rows[0]))) return false;
    this.structure.analyse(rows, dataType);
    this.structure.assignNames();
    this.spool.append({ dataType, injected, rows });
    this.processed++;
    return true;
  }

  /** Back-pressure: wait until queued batches reached the disk. */
  settle(): Promise<void> {
    return this.spool.settle();
  }

  /** `json_parser.struct` as GE saves it (taken before writing, so without injected columns). */
  state(): JsonObject {
    return new Map<string, JsonValue>([
      ['data', this.structure.toState()],
      ['parent_aliases', new Map([...this.aliases].map(([k, v]) => [k, v as JsonValue]))],
    ]);
  }

  structState(): StructState {
    return new StructState(this.state(), STRUCT_VERSION);
  }

  async results(openTable: OpenTable, onDataError: (message: string) => void): Promise<ProducedTable[]> {
    const tables = await this.writeTables(openTable, onDataError);
    const produced: ProducedTable[] = [];
    for (const [name, csv] of tables) {
      await csv.close();
      produced.push({ name, csv, primaryKey: [] });
    }
    return produced;
  }

  /** Writes every table; returns them in the order they were created. */
  async writeTables(openTable: (name: string) => CsvFile, onDataError: (message: string) => void): Promise<Map<string, CsvFile>> {
    const replay = new TableReplay(this.structure, this.aliases, openTable, onDataError);
    if (this.processed > 0) {
      for await (const batch of this.spool.read()) {
        replay.writeBatch(batch);
        for (const table of replay.tables.values()) await table.flush();
      }
    }
    return replay.tables;
  }

  dispose(): Promise<void> {
    return this.spool.dispose();
  }
}
