import { existsSync } from 'node:fs';
import { copyFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { FolderGuard } from '../folder-guard.js';
import { resolveInside } from '../../common/safe-path.js';
import type { JsonObject, JsonValue } from '../../json/index.js';
import { arrayReplaceRecursive, phpEmpty, phpJsonEncode, phpStringBytes, phpToString } from '../../php/index.js';
import { CsvFile, csvLine } from './csv-file.js';
import { JsonParser } from './json-parser/json-parser.js';
import { missingTables, type MissingTablesConfig } from './mapping/missing-tables.js';
import { chooseParser } from './parser-choice.js';
import { StructState, type BucketParser, type OpenTable, type RecordParser } from './record-parser.js';
import { Spool } from './spool.js';
import { quoteName, responseTableNameCheck, tableFileName, tableFileProblem, WORK_FOLDERS } from './table-files.js';

export interface WrittenTable {
  /** file name in out/tables, e.g. `mock-server.users` */
  file: string;
  bucket: string | null;
  table: string;
  rows: number;
  /** the CSV file's size in bytes (without its manifest) */
  bytes: number;
  /** the header row (empty for a table without columns) */
  columns: string[];
}

/** What the parser of a config (iteration) depends on. */
export interface ParserOptions {
  /** `config.incrementalOutput === true`: the manifests' flag (the last config of a bucket decides) */
  incremental: boolean;
  /** `config.mappings`; when PHP-non-empty, mapped dataTypes go to csvmap mappers */
  mappings?: JsonValue;
  /** `config.compatLevel` as GE reads it (absent/0 → 3); ≤ 1 asks for the legacy parser */
  compatLevel?: number;
}

interface BucketOutput {
  bucket: string | null;
  parser: BucketParser;
  incremental: boolean;
}

/**
 * The tables of a run, per output bucket (configs with the same bucket share one parser, as in
 * GE; the first config of a bucket decides which parser it is). Nothing appears in `out/tables`
 * until `finish()`: tables are written to a staging folder and moved in place only when all of
 * them are complete, so a failure leaves no partial table.
 */
export class OutputWriter {
  private readonly buckets = new Map<string, BucketOutput>();
  private readonly mappedConfigs: MissingTablesConfig[] = [];
  /** the parser structure as GE carries it from config to config (`$metadata`) */
  private struct: StructState | undefined;
  private structUpdated = false;

  constructor(
    private readonly outTablesDir: string,
    private readonly logger: Logger,
    /** the structure of the input state (ExtractorState.inputStruct) */
    initialStruct: StructState | undefined,
    private readonly tmpDir?: string,
    /**
     * `drafts: false`: the JSON parser always replays its queue at the end (tests compare both ways);
     * `guard`: the data folder's (no write follows a link below it), default one rooted at out/tables
     */
    options: { drafts?: boolean; guard?: FolderGuard } = {},
  ) {
    this.struct = initialStruct;
    this.drafts = options.drafts;
    this.guard = options.guard ?? new FolderGuard(outTablesDir);
  }

  private readonly drafts: boolean | undefined;
  private readonly guard: FolderGuard;

  /** The new JSON parser of a bucket (null = default bucket), as tests use it. */
  parserFor(bucket: string | null, incremental: boolean): Promise<JsonParser>;
  /** The parser of a bucket for one config, created on the bucket's first config. */
  parserFor(bucket: string | null, options: ParserOptions): Promise<RecordParser>;
  async parserFor(bucket: string | null, options: boolean | ParserOptions): Promise<RecordParser> {
    const config = typeof options === 'boolean' ? { incremental: options } : options;
    const key = bucket ?? '';
    let output = this.buckets.get(key);
    if (!output) {
      output = { bucket, parser: await this.createParser(bucket, config), incremental: config.incremental };
      this.buckets.set(key, output);
    }
    output.incremental = config.incremental; // the last config of a bucket decides
    if (!phpEmpty(config.mappings)) {
      // header-only mapped tables: each config's own incrementalOutput
      this.mappedConfigs.push({ bucket, incremental: config.incremental, mappings: config.mappings });
    }
    if (typeof options === 'boolean' && !(output.parser instanceof JsonParser)) {
      throw new Error('parserFor(bucket, incremental) serves the JSON parser only');
    }
    return output.parser;
  }

  /** Takes over the structure a config's parser learned (call after each config/iteration). */
  captureStruct(parser: RecordParser): void {
    const output = [...this.buckets.values()].find((o) => o.parser === parser);
    const learned = output?.parser.structState();
    if (!learned) return;
    // GE: $metadata = array_replace_recursive($metadata, $parser->getMetadata())
    this.struct =
      this.struct === undefined
        ? learned
        : new StructState(arrayReplaceRecursive(this.struct.struct, learned.struct), learned.version);
    this.structUpdated = true;
  }

  /** The parser keys for out/state.json; undefined when no plain JSON parser ran (mappings keep the input's). */
  structState(): StructState | undefined {
    return this.structUpdated ? this.struct : undefined;
  }

  /** Writes every table, then moves them all in place; `signal` (a stop) is obeyed until the moving starts. */
  async finish(signal?: AbortSignal): Promise<WrittenTable[]> {
    // the CSVs being written and the finished tables (named as in out/tables) in separate folders
    const staging = resolveInside(this.outTablesDir, WORK_FOLDERS.staging);
    const parts = resolveInside(this.outTablesDir, WORK_FOLDERS.parts);
    const guard = this.guard;
    await guard.remove(staging);
    await guard.remove(parts);
    await guard.mkdir(staging);
    await guard.mkdir(parts);
    const written = new Map<string, WrittenTable>();
    const opened: CsvFile[] = [];
    let partCount = 0;
    const openTable: OpenTable = () => {
      const csv = new CsvFile(path.join(parts, `${++partCount}.csv`));
      opened.push(csv);
      return csv;
    };
    try {
      for (const { bucket, parser, incremental } of this.buckets.values()) {
        signal?.throwIfAborted();
        for (const table of await parser.results(openTable, (message) => this.logger.error(message))) {
          const file = writableFileName(bucket, table.name);
          await moveFile(table.csv.file, resolveInside(staging, file));
          await guard.writeFile(
            resolveInside(staging, `${file}.manifest`),
            parserManifest(bucket, table.name, incremental, table.primaryKey),
          );
          const bytes = (await guard.inspect(resolveInside(staging, file), 'file'))?.size ?? 0;
          written.set(file, {
            file,
            bucket,
            table: table.name,
            rows: table.csv.rows,
            bytes,
            columns: table.csv.header,
          });
        }
      }
      const exists = (file: string) => written.has(file) || existsSync(resolveInside(this.outTablesDir, file));
      for (const table of missingTables(this.mappedConfigs, (bucket, name) => exists(writableFileName(bucket, name)))) {
        const header = phpStringBytes(csvLine(table.header));
        await guard.writeFile(resolveInside(staging, table.file), header);
        await guard.writeFile(resolveInside(staging, `${table.file}.manifest`), table.manifest);
        written.set(table.file, {
          file: table.file,
          bucket: table.bucket,
          table: table.name,
          rows: 0,
          bytes: header.length,
          columns: table.header,
        });
        this.logger.debug(`Created the missing mapped table ${table.file} (header only)`);
      }
      signal?.throwIfAborted();
      // renamed into out/tables: a link at a table's name is replaced, never written through
      await guard.inspect(staging, 'folder');
      for (const table of written.values()) {
        for (const suffix of ['', '.manifest']) {
          const to = resolveInside(this.outTablesDir, table.file + suffix);
          await rename(resolveInside(staging, table.file + suffix), to).catch((error: unknown) => {
            throw guard.failure(error, to, 'write');
          });
        }
      }
      return [...written.values()];
    } finally {
      for (const csv of opened) csv.destroy();
      await guard.remove(staging).catch(() => undefined);
      await guard.remove(parts).catch(() => undefined);
      await this.dispose();
    }
  }

  /** Removes temporary files (spools, mapped tables) without writing anything. */
  async dispose(): Promise<void> {
    for (const { parser } of this.buckets.values()) await parser.dispose();
  }

  private async createParser(bucket: string | null, config: ParserOptions): Promise<BucketParser> {
    const choice = chooseParser(this.struct, config.compatLevel ?? 3);
    if (choice.warning) this.logger.warn(choice.warning);
    const spool = await Spool.create(this.tmpDir);
    let parser: BucketParser;
    if (choice.kind === 'legacy') {
      // the legacy and mapping parsers are loaded only by the configurations that use them
      const { LegacyJsonParser } = await import('./legacy-parser/legacy-parser.js');
      const legacy = new LegacyJsonParser(
        spool,
        (message) => this.logger.warn(message),
        responseTableNameCheck(bucket),
      );
      parser = legacy;
      await seedOrDispose(parser, () => legacy.seed(choice.seed));
    } else {
      const json = new JsonParser(spool, {
        drafts: this.drafts,
        checkTableName: responseTableNameCheck(bucket),
        warn: (message) => this.logger.warn(message),
      });
      parser = json;
      await seedOrDispose(parser, () => json.seed(choice.seed));
    }
    if (phpEmpty(config.mappings)) return parser;
    try {
      const { MappedParser } = await import('./mapping/mapped-parser.js');
      return await MappedParser.create(config.mappings!, parser, this.logger, this.tmpDir);
    } catch (error) {
      await parser.dispose();
      throw error;
    }
  }
}

/**
 * The file name of a table, refused when it cannot be written safely. Configured names are checked
 * before the run and names from responses when their table is created; this is the last check
 * before a file is named (resolveInside then keeps every path inside out/tables).
 */
function writableFileName(bucket: string | null, table: string): string {
  const problem = tableFileProblem(bucket, table);
  if (problem)
    throw new UserError(
      'GEX_RESPONSE_NOT_TABULAR',
      `Cannot write the table ${quoteName(table)}${bucket === null ? '' : ` of the bucket ${quoteName(bucket)}`}: ${problem}`,
    );
  return tableFileName(bucket, table);
}

async function seedOrDispose(parser: BucketParser, seed: () => void): Promise<void> {
  try {
    seed();
  } catch (error) {
    await parser.dispose();
    throw error;
  }
}

/** Moves a finished CSV into the staging folder (copying when it lives on another file system). */
async function moveFile(from: string, to: string): Promise<void> {
  if (from === to) return;
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await copyFile(from, to);
    await unlink(from);
  }
}

/**
 * docs/ge-behaviour.md#manifests: `{"destination":"in.c-<bucket>.<table>","incremental":…,"primary_key":[…]}`, compact as
 * GE's json_encode writes it; no destination for the default bucket, no primary key unless the
 * table has one (csvmap tables only).
 */
function parserManifest(bucket: string | null, table: string, incremental: boolean, primaryKey: JsonValue[]): string {
  const m: JsonObject = new Map();
  if (bucket !== null) m.set('destination', `in.c-${bucket}.${table}`);
  m.set('incremental', incremental);
  // csvtable: `!empty($file->getPrimaryKey())` tests the comma-joined key
  if (!phpEmpty(primaryKey.map(phpToString).join(','))) m.set('primary_key', primaryKey);
  return phpJsonEncode(m, { objectsAreArrays: true });
}
