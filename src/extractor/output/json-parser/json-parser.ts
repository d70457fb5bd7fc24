import { UserError } from '../../../common/errors.js';
import { quoteForLog } from '../../../common/log-text.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../../json/index.js';
import { isIntegerKey } from '../../../php/index.js';
import type { CsvFile } from '../csv-file.js';
import { closedTables, StructState, type BucketParser, type OpenTable, type ProducedTable } from '../record-parser.js';
import type { PageSource, Spool } from '../spool.js';
import type { TableNameCheck } from '../table-files.js';
import { DraftTables } from './draft-tables.js';
import { ITEM_KEY } from './schema-node.js';
import { Structure } from './structure.js';
import { TableReplay } from './table-replay.js';

export const STRUCT_VERSION = 3;

/**
 * Generic Extractor's JSON → CSV flattener (keboola/json-parser 3), in two phases as GE runs it:
 * `process()` analyses each batch at once (so every header covers the whole run) and queues it on
 * disk; `writeTables()` replays the queue into CSV files at the end — unless the draft tables,
 * written while the run goes on, are known to hold the same bytes (see DraftTables).
 */
export class JsonParser implements BucketParser {
  readonly structure: Structure;
  private readonly aliases = new Map<string, string>();
  private processed = 0;
  private drafts: DraftTables | undefined;

  /**
   * `drafts: false` always replays the queue at the end (tests compare both ways);
   * `checkTableName` refuses table names that cannot be file names; `warn` receives GE's
   * analysis warnings.
   */
  constructor(
    private readonly spool: Spool,
    private readonly options: {
      drafts?: boolean;
      checkTableName?: TableNameCheck;
      warn?: (message: string) => void;
    } = {},
  ) {
    this.structure = new Structure(options.warn);
  }

  /** Seeds names and order from a saved `json_parser.struct` (version 3). */
  seed(struct: JsonValue | undefined): void {
    if (!isJsonObject(struct)) return;
    this.structure.load(struct.get('data') ?? null);
    const aliases = struct.get('parent_aliases');
    if (isJsonObject(aliases)) for (const [k, v] of aliases) if (typeof v === 'string') this.aliases.set(k, v);
  }

  /**
   * Analyses and queues records of `dataType`. An empty batch is ignored, and so is exactly `[null]`;
   * other single PHP-empty values (`[false]`, `[0]`, `[""]`, `[[]]`) still make a table, as in GE
   * (unlike the legacy parser, which skips them all).
   */
  process(rows: JsonValue[], dataType: string, injected: JsonObject = new Map(), source?: PageSource): boolean {
    if (rows.length === 0 || (rows.length === 1 && rows[0] === null)) return false;
    for (const key of injected.keys()) refuseInjectedKey(key);
    this.structure.analyse(rows, dataType);
    this.structure.assignNames();
    const batch = { dataType, injected, rows };
    this.spool.append(batch, source);
    if (this.options.drafts !== false) {
      this.drafts ??= new DraftTables(this.structure, this.aliases, this.spool.dir, this.options.checkTableName);
      this.drafts.write(batch);
    }
    this.processed++;
    return true;
  }

  /** Back-pressure: wait until queued batches (and drafts) reached the disk. */
  async settle(): Promise<void> {
    await this.spool.settle();
    await this.drafts?.flush();
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
    return closedTables(await this.writeTables(openTable, onDataError));
  }

  /** Writes every table; returns them in the order they were created. */
  async writeTables(
    openTable: (name: string) => CsvFile,
    onDataError: (message: string) => void,
  ): Promise<Map<string, CsvFile>> {
    const drafted = await this.drafts?.finish(onDataError);
    if (drafted) return drafted;
    const replay = new TableReplay(this.structure, this.aliases, openTable, onDataError, this.options.checkTableName);
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

/**
 * userData keys GE's JSON parser crashes on (exit 2) when it writes the rows: integer-like keys
 * (PHP makes them int keys, refused by a string parameter) and the names of the structure's own
 * entries of a table node (`nodeType`, `[]`). Refused as a user error instead.
 */
function refuseInjectedKey(key: string): void {
  let problem: string | undefined;
  if (isIntegerKey(key)) problem = 'is an integer';
  else if (key === 'nodeType' || key === ITEM_KEY) problem = 'is a name the parser reserves';
  if (problem) {
    throw new UserError(
      'GEX_CONFIG_INVALID',
      `The userData key ${quoteForLog(key)} ${problem}: Generic Extractor's JSON parser fails on it. Rename the key, or map the data type with mappings.`,
    );
  }
}
