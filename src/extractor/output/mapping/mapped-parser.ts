import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { UserError } from '../../../common/errors.js';
import type { Logger } from '../../../common/logger.js';
import type { JsonObject, JsonValue } from '../../../json/index.js';
import { asPhpArray, phpEmpty, phpGettype } from '../../../php/index.js';
import { CsvFile } from '../csv-file.js';
import type { BucketParser, OpenTable, ProducedTable, StructState } from '../record-parser.js';
import type { PageSource } from '../spool.js';
import { BadMappingConfig, BadMappingData, Mapper } from './mapper.js';

/**
 * `config.mappings` in front of a JSON parser (juicer `JsonMap`): records of a mapped dataType go
 * to its mapper, which writes its CSV rows at once (to a work folder, so memory stays flat);
 * every other dataType falls back to the JSON parser of the same bucket. Results: the mappers'
 * tables in `mappings` order, then the fallback's; a table produced twice must have the same
 * header and gets the second one's rows appended.
 */
export class MappedParser implements BucketParser {
  private readonly mappers = new Map<string, Mapper>();
  private readonly files: CsvFile[] = [];
  private fileCount = 0;

  private constructor(
    mappings: JsonObject,
    private readonly fallback: BucketParser,
    private readonly workDir: string,
    private readonly logger: Logger,
  ) {
    for (const [type, mapping] of mappings) {
      if (phpEmpty(mapping))
        throw new UserError('GEX_CONFIG_INVALID', `Empty mapping for '${type}' data type in 'mappings' config.`);
      const entries = asPhpArray(mapping);
      if (!entries) {
        throw new UserError(
          'GEX_CONFIG_INVALID',
          `Mapping must be 'array' type, '${phpGettype(mapping)}' type given, for '${type}' data type in 'mappings' config.`,
        );
      }
      this.mappers.set(type, new Mapper(entries, type, () => this.newFile()));
    }
  }

  /** `mappings` must be a non-empty object (or list); the work folder lives under `tmpRoot`. */
  static async create(
    mappings: JsonValue,
    fallback: BucketParser,
    logger: Logger,
    tmpRoot = os.tmpdir(),
  ): Promise<MappedParser> {
    const entries = asPhpArray(mappings);
    if (!entries || entries.size === 0)
      throw new UserError('GEX_CONFIG_INVALID', 'Cannot initialize JSON Mapper with no mapping');
    const workDir = await mkdtemp(path.join(tmpRoot, 'gex-mappings-'));
    try {
      return new MappedParser(entries, fallback, workDir, logger);
    } catch (error) {
      await rm(workDir, { recursive: true, force: true });
      throw error;
    }
  }

  process(rows: JsonValue[], dataType: string, injected: JsonObject = new Map(), source?: PageSource): void {
    const mapper = this.mappers.get(dataType);
    if (!mapper) {
      this.fallback.process(rows, dataType, injected, source);
      return;
    }
    try {
      mapper.parse(rows, injected);
    } catch (error) {
      if (error instanceof BadMappingConfig)
        throw new UserError('GEX_CONFIG_INVALID', `Bad Json to CSV Mapping configuration: ${error.message}`);
      if (error instanceof BadMappingData)
        throw new UserError(
          'GEX_RESPONSE_NOT_TABULAR',
          `Error saving '${dataType}' data to CSV column: ${error.message}`,
        );
      throw error;
    }
  }

  /** Each page's mapped rows are in their files before the next page is fetched. */
  async settle(): Promise<void> {
    for (const file of this.files) await file.written();
    await this.fallback.settle();
  }

  /** GE does not save the fallback parser's structure when mappings are set. */
  structState(): StructState | undefined {
    return undefined;
  }

  async results(openTable: OpenTable, onDataError: (message: string) => void): Promise<ProducedTable[]> {
    const results = new Map<string, ProducedTable>();
    for (const mapper of this.mappers.values()) {
      for (const table of mapper.tables().values()) {
        if (!table) continue;
        await table.csv.close();
        await this.merge(results, table);
      }
    }
    for (const table of await this.fallback.results(openTable, onDataError)) await this.merge(results, table);
    return [...results.values()];
  }

  async dispose(): Promise<void> {
    for (const file of this.files) file.destroy();
    await this.fallback.dispose();
    await rm(this.workDir, { recursive: true, force: true });
  }

  private newFile(): CsvFile {
    const file = new CsvFile(path.join(this.workDir, `table-${++this.fileCount}.csv`));
    this.files.push(file);
    return file;
  }

  private async merge(results: Map<string, ProducedTable>, table: ProducedTable): Promise<void> {
    const existing = results.get(table.name);
    if (!existing) {
      results.set(table.name, table);
      return;
    }
    this.logger.debug(`Merging results for '${table.name}'.`);
    if (!sameHeader(existing.csv.header, table.csv.header)) {
      throw new UserError(
        'GEX_RESPONSE_NOT_TABULAR',
        `Multiple results for '${table.name}' table have different columns!`,
      );
    }
    await pipeline(
      createReadStream(table.csv.file, { start: table.csv.headerBytes }),
      createWriteStream(existing.csv.file, { flags: 'a' }),
    );
    existing.csv.rows += table.csv.rows;
    await rm(table.csv.file, { force: true });
  }
}

function sameHeader(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((name, i) => name === b[i]);
}
